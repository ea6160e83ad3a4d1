//! Cell sink: the end of every cell's journey; measures per-VC delay and throughput.
//!
//! ```text
//!   in (many) -->[ sink ]
//! ```
//!
//! Statistics are kept per flow and reported under the component `<sink>/vc<N>`, N the
//! VC label the cells carried on arrival (`<sink>/vc<N>-f<flow>` if several flows
//! arrive with one label). Loss per VC comes from the run's ledger (`flow_loss_ratio`
//! on each source), since only the source knows what was sent.
//!
//! With `delay_quantiles = true` each flow also keeps the distribution of its delays
//! (an HDR histogram of `delay_digits` significant digits, [`Quantiles`]) and reports
//! the cell transfer delay's quantiles (`sink_delay` `p50` … `p99_999`) and the
//! peak-to-peak cell delay variation at the same levels (`sink_cdv`): the quantile
//! less the smallest delay seen, the estimate of the fixed delay (ITU-T I.356's
//! 2-point CDV; ATM Forum TM 4.0 section 2.1's peak-to-peak CDV).
//!
//! With `frames = true` the sink also reassembles the AAL5 frames of each VC label (the
//! cells of framed sources: a `trace` of packets, a host's PDUs) as a receiver's AAL5
//! does — a frame missing cells fails its Length check, one whose end-of-frame cell was
//! lost merges into the next and fails its CRC — and reports whole and discarded frames
//! (`aal5_rx_pdus`, `aal5_drop_pdus`, as a host does), the goodput (`sink_goodput`:
//! the cell rate of whole frames, and their share of the framed cells received: the
//! effective throughput of Romanow and Floyd 1995) and each whole frame's delay from its
//! first cell's birth to its last cell's arrival (`sink_frame_delay`).

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::PortId;
use crate::params::{ParamIssue, Params};
use crate::params::{ParamSpec, ParamType};
use atmsim_kernel::probe::{Distribution, ProbeKind, ProbeSpec, Quantiles, Report, Tally};
use crate::aal::aal5::{Reassembler, Reassembly};
use atmsim_kernel::{ByFlow, Ledger, SimTime, CELL_BITS};

use crate::cell::{Cell, FLAG_CLP, FLAG_EFCI};
use crate::series::{SeriesDecl, MB_PER_CELL};
use atmsim_kernel::SeriesKind;

pub const PROBES: [ProbeSpec; 8] = [
    ProbeSpec { name: "sink_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells received per VC (count, rate) — component <sink>/vc<N>" },
    ProbeSpec { name: "sink_clp1_cells", unit: "cells", kind: ProbeKind::Counter, help: "received cells with CLP = 1 (tagged by usage parameter control) per VC (count)" },
    ProbeSpec { name: "sink_efci_cells", unit: "cells", kind: ProbeKind::Counter, help: "received cells with the EFCI bit set (marked by a congested buffer) per VC (count)" },
    ProbeSpec { name: "sink_delay", unit: "s", kind: ProbeKind::Tally, help: "source-to-sink cell delay per VC (count, mean, std, min, max; with delay_quantiles also the quantiles p50, p90, p99, p99_9, p99_99, p99_999)" },
    ProbeSpec { name: "sink_cdv", unit: "s", kind: ProbeKind::Histogram, help: "with delay_quantiles: peak-to-peak cell delay variation per VC, the delay's quantile less its minimum (p50 … p99_999, as sink_delay's)" },
    ProbeSpec { name: "sink_throughput", unit: "Mb/s", kind: ProbeKind::Gauge, help: "received cell bit rate per VC, 424 bits per cell (value)" },
    ProbeSpec { name: "sink_goodput", unit: "Mb/s", kind: ProbeKind::Gauge, help: "with frames: per VC label, the cell bit rate of the AAL5 frames received whole (value, 424 bits per cell) and their cells' share of the framed cells received (ratio; frames counted at their last cell)" },
    ProbeSpec { name: "sink_frame_delay", unit: "s", kind: ProbeKind::Tally, help: "with frames: per VC label, each whole AAL5 frame's delay from its first cell's birth to its last cell's arrival (count, mean, std, min, max; with delay_quantiles also p50 … p99_999)" },
];

/// What a sink samples as time series, for all its cells or one VC's (`<sink>/vc<N>`).
pub const SERIES: [SeriesDecl; 3] = [
    SeriesDecl { name: "sink_rx_cells", unit: "cells/s", kind: SeriesKind::Rate, scale: 1.0, help: "cells received per second over each interval" },
    SeriesDecl { name: "sink_throughput", unit: "Mb/s", kind: SeriesKind::Rate, scale: MB_PER_CELL, help: "received cell bit rate over each interval, 424 bits per cell" },
    SeriesDecl { name: "sink_goodput", unit: "Mb/s", kind: SeriesKind::Rate, scale: MB_PER_CELL, help: "with frames: cell bit rate of the AAL5 frames received whole over each interval (a frame counted at its last cell), 424 bits per cell" },
];

#[derive(Clone, Debug, Default)]
struct PerFlow {
    vc: u32,
    delivered: u64,
    rx: u64,
    clp1: u64,
    efci: u64,
    delay: Tally,
}

/// The `sink` kind's parameter declarations.
pub const PARAMS: [ParamSpec; 2] = [
    ParamSpec { name: "delay_quantiles", ty: ParamType::Bool, default: Some("false"), required: false, help: "keep the distribution of each delay the component measures and report its quantiles p50 … p99_999: sink and abr_dest each VC's cell delay (sink_delay) and peak-to-peak CDV (sink_cdv), host ping's round-trip times (ping_rtt), received UDP datagrams' delays (udp_delay) and each TCP connection's segment delays (tcp_segment_delay); costs about 8 KB per distribution per doubling of the largest delay at 3 digits, 1 KB at 2", source: "atmsim option (QoS parameters of ITU-T I.356 and ATM Forum TM 4.0 section 2.1: CTD quantiles, peak-to-peak CDV; ITU-T Y.1540's IP packet delay quantiles)" },
    ParamSpec { name: "delay_digits", ty: ParamType::Int { min: 1, max: 5 }, default: Some("3"), required: false, help: "significant decimal digits the delay distribution keeps: each quantile is within 10^-digits (relative) of the exact sample quantile", source: "atmsim convention (3 digits: 0.1%, below any interval a run gives)" },
];

/// The `sink` kind's own parameter declarations (beyond [`PARAMS`], which hosts and
/// ABR destinations share).
pub const FRAME_PARAMS: [ParamSpec; 1] = [
    ParamSpec { name: "frames", ty: ParamType::Bool, default: Some("false"), required: false, help: "reassemble each VC label's AAL5 frames (cells of framed sources: traces of packets, hosts) and report whole and discarded frames (aal5_rx_pdus, aal5_drop_pdus by cause length or crc), the goodput (sink_goodput) and the frame delay (sink_frame_delay); a partial frame waits for its end without a timeout", source: "atmsim option (ITU-T I.363.5 reassembly; goodput as Romanow and Floyd 1995 measure it)" },
];

/// AAL5 frame books of one VC label (`frames = true`).
#[derive(Clone, Debug, Default)]
struct FrameBooks {
    reasm: Reassembler,
    whole: u64,
    whole_cells: u64,
    /// Frames discarded by cause (length, crc) and their cells, since the last reset.
    dropped: [u64; 2],
    dropped_cells: u64,
    delay: Distribution,
    /// Cells of whole frames, the whole run (for the goodput series).
    run_whole_cells: u64,
}

/// A receiver's AAL5 never times out here (a sink has no timers): a frame's end decides.
const NO_TIMEOUT: atmsim_kernel::SimDuration = atmsim_kernel::SimDuration(u64::MAX / 4);

/// The `sink` kind's parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SinkParams {
    /// Significant digits of each flow's delay distribution; `None`: not kept.
    pub delay_digits: Option<u8>,
}

impl SinkParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        let on = p.need("delay_quantiles", Params::bool)?;
        let digits = p.need("delay_digits", Params::int)?;
        let digits = u8::try_from(digits).map_err(|_| ParamIssue::new("delay_digits", "must be 1 to 5"))?;
        Ok(SinkParams { delay_digits: on.then_some(digits) })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        match self.delay_digits {
            Some(d) if !Quantiles::DIGITS.contains(&d) => Err(ParamIssue::new("delay_digits", "must be 1 to 5")),
            _ => Ok(()),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Sink {
    flows: ByFlow<PerFlow>,
    since: SimTime,
    /// An empty delay distribution (`delay_quantiles`), the pattern of each flow's.
    quantiles: Option<Quantiles>,
    /// Each flow's delay distribution in picoseconds, by flow as `flows` (kept apart
    /// so that a sink without them carries nothing of them on a cell's path).
    dists: ByFlow<Quantiles>,
    /// `frames = true`: each VC label's AAL5 frame books, by label.
    frames: Option<std::collections::BTreeMap<u32, FrameBooks>>,
    /// Delay distributions or frames kept: the one test on a cell's path for both.
    extra: bool,
    /// Significant digits of the frame delays' distributions (`delay_quantiles`).
    delay_digits: Option<u8>,
}

impl Sink {
    /// A sink keeping delay distributions as `params` say, and AAL5 frame books if
    /// `frames`.
    pub fn new(params: SinkParams, frames: bool) -> Self {
        let SinkParams { delay_digits } = params;
        let quantiles = delay_digits.and_then(Quantiles::new);
        Sink { extra: quantiles.is_some() || frames, quantiles, frames: frames.then(Default::default), delay_digits, ..Sink::default() }
    }

    /// Adds a delay (ps) to flow `f`'s distribution and an AAL5 cell to its VC's frame
    /// books: out of line, so that a sink without either keeps its cell path as it was.
    #[inline(never)]
    fn record_extra(&mut self, f: u32, delay: u64, cell: &Cell, now: SimTime) {
        if let Some(empty) = &self.quantiles {
            self.dists.entry_with(f, || empty.clone()).add(delay);
        }
        let digits = self.delay_digits;
        if let (Some(frames), true) = (&mut self.frames, cell.pdu_cells != 0) {
            let b = frames.entry(cell.vc).or_insert_with(|| FrameBooks { delay: Distribution::new(digits), ..FrameBooks::default() });
            if let (_, Some(done)) = b.reasm.on_cell(cell, now, NO_TIMEOUT) {
                match done {
                    Reassembly::Delivered { cells, born, .. } => {
                        b.whole += 1;
                        b.whole_cells += u64::from(cells);
                        b.run_whole_cells += u64::from(cells);
                        b.delay.add(now.since(born).0);
                    }
                    Reassembly::Discarded { cause, cells, .. } => {
                        b.dropped[usize::from(cause != "length")] += 1;
                        b.dropped_cells += u64::from(cells);
                    }
                }
            }
        }
    }

    /// Cells delivered so far, all of them (`vc` None) or those that arrived on one VC
    /// label (what the first two quantities of [`SERIES`] count).
    pub fn delivered(&self, vc: Option<u32>) -> f64 {
        self.flows.values().filter(|s| vc.is_none_or(|v| s.vc == v)).map(|s| s.delivered).sum::<u64>() as f64
    }



}

impl crate::kind::Kind for Sink {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let _ = b;
        let params = SinkParams::bind(p)?;
        params.validate()?;
        Ok(Sink::new(params, p.need("frames", Params::bool)?))
    }
    #[inline(always)]
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        // The sink consumes the cell: its payload, if any, is released.
        crate::drops::discard(&cell, ctx);
        let f = cell.flow;
        let s = self.flows.entry(f);
        s.vc = cell.vc;
        s.delivered += 1;
        s.rx += 1;
        s.clp1 += u64::from(cell.flags & FLAG_CLP != 0);
        s.efci += u64::from(cell.flags & FLAG_EFCI != 0);
        let delay = now.since(cell.born).0;
        s.delay.add(delay as f64);
        if self.extra {
            self.record_extra(f, delay, &cell, now);
        }
    }
    /// A sink only records what it receives.
    fn passive(&self) -> bool {
        true
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        for s in self.flows.values_mut() {
            s.rx = 0;
            s.clp1 = 0;
            s.efci = 0;
            s.delay.reset();
        }
        self.dists.values_mut().for_each(Quantiles::reset);
        for b in self.frames.iter_mut().flat_map(|m| m.values_mut()) {
            b.whole = 0;
            b.whole_cells = 0;
            b.dropped = [0; 2];
            b.dropped_cells = 0;
            b.delay.reset();
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        // Flows per VC label (counted once: a per-flow scan was quadratic in flows).
        let mut per_vc: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
        for s in self.flows.values() {
            *per_vc.entry(s.vc).or_default() += 1;
        }
        for (f, s) in self.flows.iter() {
            let shared = per_vc.get(&s.vc).is_some_and(|&n| n > 1);
            let vc = crate::cell::vc_name(s.vc);
            let name = if shared { format!("{path}/{vc}-f{f}") } else { format!("{path}/{vc}") };
            let rate = if secs > 0.0 { s.rx as f64 / secs } else { f64::NAN };
            out.push(&name, "sink_rx_cells", "count", s.rx as f64, "cells");
            out.push(&name, "sink_rx_cells", "rate", rate, "cells/s");
            out.push(&name, "sink_clp1_cells", "count", s.clp1 as f64, "cells");
            out.push(&name, "sink_efci_cells", "count", s.efci as f64, "cells");
            s.delay.report(out, &name, "sink_delay", "s", 1e-12);
            if let Some(q) = self.dists.get(f) {
                let (lo, hi) = (s.delay.min() * 1e-12, s.delay.max() * 1e-12);
                q.report(&s.delay, out, &name, "sink_delay", "s", 1e-12);
                for (stat, v) in q.levels(1e-12, lo, hi) {
                    out.push(&name, "sink_cdv", stat, v - lo, "s");
                }
            }
            out.push(&name, "sink_throughput", "value", rate * CELL_BITS as f64 / 1e6, "Mb/s");
        }
        for (&vc, b) in self.frames.iter().flatten() {
            let name = format!("{path}/{}", crate::cell::vc_name(vc));
            out.push(&name, "aal5_rx_pdus", "count", b.whole as f64, "1");
            out.push(&name, "aal5_drop_pdus", "count", b.dropped.iter().sum::<u64>() as f64, "1");
            out.push(&name, "aal5_drop_pdus", "length", b.dropped[0] as f64, "1");
            out.push(&name, "aal5_drop_pdus", "crc", b.dropped[1] as f64, "1");
            let rate = if secs > 0.0 { b.whole_cells as f64 * CELL_BITS as f64 / secs / 1e6 } else { f64::NAN };
            out.push(&name, "sink_goodput", "value", rate, "Mb/s");
            let closed = b.whole_cells + b.dropped_cells;
            out.push(&name, "sink_goodput", "ratio", if closed > 0 { b.whole_cells as f64 / closed as f64 } else { f64::NAN }, "1");
            b.delay.report(out, &name, "sink_frame_delay", "s", 1e-12);
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        for (f, s) in self.flows.iter() {
            l.add_delivered(f, s.delivered);
        }
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let vc = if sub.is_empty() { 0 } else { crate::series::parse_vc_name(sub)? as u64 + 1 };
        let q = crate::series::find(&SERIES, name)?;
        // the goodput series needs the frame books
        (q != 2 || self.frames.is_some()).then(|| crate::series::code(vc, q))
    }
    fn sample(&self, index: u64) -> f64 {
        let (element, q) = crate::series::split(index);
        let vc = element.checked_sub(1).map(|l| l as u32);
        match q {
            2 => self.frames.iter().flatten().filter(|(&v, _)| vc.is_none_or(|w| v == w)).map(|(_, b)| b.run_whole_cells).sum::<u64>() as f64,
            _ => self.delivered(vc),
        }
    }
}

/// The `sink` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "sink",
    help: "cell sink: per-VC delay (quantiles and CDV on request), throughput; AAL5 frames, goodput and frame delay on request",
    source: "atmsim",
    params: &[&PARAMS, &FRAME_PARAMS],
    inputs: &crate::kind::IN_MANY,
    outputs: &[],
    ports: None,
    probes: &[&crate::traffic::sink::PROBES, &crate::aal::sar::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::traffic::sink::SERIES }, crate::series::KindSeries { at: "vc<N>", series: &crate::traffic::sink::SERIES }],
    is_source: false,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};
