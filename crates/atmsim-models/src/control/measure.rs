//! The measurement chips of evans96's AN2/SONET gateway, as one pass-through probe on a
//! slotted line: the *pacing measurement FPGA* (per monitored VC a 24-bit running cell
//! count, a "stopped" flag and a burst count; "a maximum of 127 VCs can be monitored")
//! and the *traffic measurement FPGA* (the VCI of the cell in every cell slot, from
//! which the paper draws its interarrival histograms, time series and autocorrelation,
//! Figs 5–11).
//!
//! ```text
//!   in (many) ──►[ slot of each cell on the monitored line ─► chip registers, histograms ]──► out
//! ```
//!
//! *Slots.* The monitored line is slotted from time zero at its cell rate (`phy` or
//! `rate`): slot k starts at `ceil(k · 424 / rate)`. A cell whose last bit arrives at
//! `t` is seen in the slot in progress at `t − 1 ps` (a cell ending on a boundary
//! occupied the slot before it); two cells in one slot (a faster feeder) are seen in
//! consecutive slots, as the chip can see only one per slot. With `framing = "sonet"`
//! the slots are those of the STS-3c/STS-12c frame ([`crate::link::sonet`]) starting
//! `frame_offset` after time zero, as a framed link sends them: a cell ending at `t` is
//! in the first frame slot ending at or after `t − frame_offset`, and every slot
//! between two cells is an idle cell (`meas_idle_cells`).
//!
//! *Registers* ([`MeasurementChip`], sans-IO, driven slot by slot):
//! - cell count: "the 24-bit running count of the number of cells transmitted on that
//!   VC" — it wraps at 2^24 (16,777,216 cells, 17 s of a saturated OC-12c);
//! - stopped flag: set when the i/m controller stops the VC ([`MeasurementChip::stop`]),
//!   "remains set until a cell is transmitted on that VC";
//! - burst count: "A burst occurs when the line is idle, becomes active, and again goes
//!   idle. Bursts are defined by the line's being idle for two consecutive cell slots"
//!   (`burst_idle_slots`, default 2). A VC that sends at least one cell in a burst has its
//!   count incremented once, except — the same-VC exception, for the AN2's
//!   every-other-slot restriction — when the cell opening the burst is on the same VC as
//!   the last cell before it.
//!
//! The registers "can be read and cleared by the LCP" ([`MeasurementChip::read_and_clear`]).
//! The i/m controller ([`crate::control::iofm`]) drives one on its output: its bursts
//! feed the adaptive shaper (one idle slot ends a burst there, as the shaper has always
//! counted them) and its stopped flags are the `iofm_stopped` probe. In this kind no
//! controller drives the flag, so it reads 0 unless the VC was stopped through
//! [`MeasurementChip::stop`].

use std::collections::BTreeMap;

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, Tally};
use atmsim_kernel::PortId;
use atmsim_kernel::{Ledger, Rate, SeriesKind, SimDuration, SimTime, CELL_BITS};

use crate::cell::{parse_vc_label, vc_name, Cell, Msg};
use crate::link::sonet::SonetGrid;
use crate::link::transmitter::{LineRateParams, PHY_NAMES};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::series::{SeriesDecl, MB_PER_CELL};

/// Width of the cell-count register (evans96: "24-bit running count").
pub const COUNT_BITS: u32 = 24;
const COUNT_MASK: u32 = (1 << COUNT_BITS) - 1;
/// VCs the pacing measurement chip can monitor (evans96).
pub const MAX_VCS: i64 = 127;

/// One monitored VC's registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VcRegisters {
    /// Cells sent on the VC, modulo 2^24.
    pub cells: u32,
    /// Stopped by the i/m controller and no cell sent since.
    pub stopped: bool,
    /// Bursts the VC was active in.
    pub bursts: u32,
}

#[derive(Clone, Copy, Debug, Default)]
struct VcState {
    regs: VcRegisters,
    /// The last burst counted for this VC.
    burst_seen: u64,
}

/// The pacing measurement chip's registers, driven slot by slot (sans-IO).
#[derive(Clone, Debug)]
pub struct MeasurementChip {
    /// Consecutive idle slots that end a burst.
    idle_slots: u64,
    /// Largest number of monitored VCs; cells of further VCs are not counted.
    max_vcs: usize,
    vcs: BTreeMap<u32, VcState>,
    /// Slot and VC of the last cell seen (any VC, monitored or not).
    last: Option<(u64, u32)>,
    burst_id: u64,
}

impl MeasurementChip {
    /// A chip on which `idle_slots` (≥ 1) idle slots end a burst, monitoring at most
    /// `max_vcs` VCs (the first ones seen, or those given to [`MeasurementChip::monitor`]).
    pub fn new(idle_slots: u64, max_vcs: usize) -> Self {
        MeasurementChip { idle_slots: idle_slots.max(1), max_vcs, vcs: BTreeMap::new(), last: None, burst_id: 0 }
    }

    /// Monitors `vc` from now on (false when the chip's table is full).
    pub fn monitor(&mut self, vc: u32) -> bool {
        if self.vcs.contains_key(&vc) {
            return true;
        }
        if self.vcs.len() >= self.max_vcs {
            return false;
        }
        self.vcs.insert(vc, VcState::default());
        true
    }

    /// A cell of `vc` in slot `slot` (slots strictly increasing from call to call).
    /// Returns whether the VC is monitored.
    pub fn cell(&mut self, slot: u64, vc: u32, auto_monitor: bool) -> bool {
        let opens = self.last.is_none_or(|(s, _)| slot > s + self.idle_slots);
        let same_vc = self.last.is_some_and(|(_, last)| last == vc);
        if opens {
            self.burst_id += 1;
        }
        self.last = Some((slot, vc));
        if auto_monitor {
            self.monitor(vc);
        }
        let id = self.burst_id;
        let Some(st) = self.vcs.get_mut(&vc) else { return false };
        if opens && same_vc {
            // The same-VC exception: a burst opened by the VC that sent the last cell
            // before it continues that VC's burst.
            st.burst_seen = id;
        }
        if st.burst_seen != id {
            st.burst_seen = id;
            st.regs.bursts = st.regs.bursts.wrapping_add(1);
        }
        st.regs.cells = st.regs.cells.wrapping_add(1) & COUNT_MASK;
        st.regs.stopped = false;
        true
    }

    /// The i/m controller stopped `vc` (no token left).
    pub fn stop(&mut self, vc: u32) {
        if let Some(st) = self.vcs.get_mut(&vc) {
            st.regs.stopped = true;
        }
    }

    /// The registers of `vc` (None: not monitored).
    pub fn read(&self, vc: u32) -> Option<VcRegisters> {
        self.vcs.get(&vc).map(|s| s.regs)
    }

    /// Reads the registers of `vc` and clears its cell and burst counts (the stopped
    /// flag is state, not a count: it stays).
    pub fn read_and_clear(&mut self, vc: u32) -> Option<VcRegisters> {
        let st = self.vcs.get_mut(&vc)?;
        let r = st.regs;
        st.regs.cells = 0;
        st.regs.bursts = 0;
        Some(r)
    }

    /// Monitored VCs in label order.
    pub fn vcs(&self) -> impl Iterator<Item = (u32, VcRegisters)> + '_ {
        self.vcs.iter().map(|(&v, s)| (v, s.regs))
    }
}

pub const PARAMS: [ParamSpec; 12] = [
    ParamSpec { name: "phy", ty: ParamType::Choice(&PHY_NAMES), default: None, required: false, help: "physical-layer preset of the monitored line, whose cell slots the chip samples; give phy or rate", source: "required (phy or rate); ITU-T I.432" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "cell-carrying bit rate of the monitored line (424 bits per slot); give phy or rate", source: "required (phy or rate)" },
    ParamSpec { name: "framing", ty: ParamType::Choice(&crate::link::transmitter::FRAMINGS), default: Some("none"), required: false, help: "\"sonet\": the monitored line's slots are the STS-3c/STS-12c frame's cell slots (as a framed link sends them; needs phy = OC-3c or OC-12c), so idle cells and the overhead's row gaps are seen as they are sent", source: "ITU-T G.707, I.432.2" },
    ParamSpec { name: "frame_offset", ty: ParamType::Time, default: Some("0 s"), required: false, help: "with framing = \"sonet\": how much later than time zero the monitored line's frame starts here (the propagation delays between the framed transmitter and the chip)", source: "the scenario's link delays" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: false, help: "VCs the pacing measurement registers monitor (\"VPI/VCI\" or \"VCI\"); default: the first max_vcs VCs seen", source: "evans96 (the LCP configures the monitored VCs)" },
    ParamSpec { name: "max_vcs", ty: ParamType::Int { min: 1, max: MAX_VCS }, default: Some("127"), required: false, help: "VCs the registers can monitor", source: "evans96 (\"a maximum of 127 VCs can be monitored\")" },
    ParamSpec { name: "burst_idle_slots", ty: ParamType::Int { min: 1, max: 1_000_000 }, default: Some("2"), required: false, help: "consecutive idle slots that end a burst", source: "evans96 (\"idle for two consecutive cell slots\")" },
    ParamSpec { name: "window", ty: ParamType::Time, default: Some("18 ms"), required: false, help: "length of one capture: the mean cell rate is also reported per window of this length (meas_window_rate)", source: "evans96 (\"Data was gathered and averaged for about 18 ms\")" },
    ParamSpec { name: "hist_slots", ty: ParamType::Int { min: 1, max: 100_000 }, default: Some("64"), required: false, help: "interarrival and inter-idle histograms: one bucket per slot count 1..hist_slots, the rest in slots_gt_<hist_slots>", source: "atmsim convention" },
    ParamSpec { name: "acf_lags", ty: ParamType::Int { min: 0, max: 10_000 }, default: Some("32"), required: false, help: "lags of the interarrival autocorrelation (meas_interarrival_acf)", source: "atmsim convention (evans96 Fig 9)" },
    ParamSpec { name: "record", ty: ParamType::Int { min: 0, max: 10_000_000 }, default: Some("65536"), required: false, help: "interarrivals kept after the warm-up for the autocorrelation", source: "atmsim convention" },
    ParamSpec { name: "trace_slots", ty: ParamType::Int { min: 0, max: 1_000_000 }, default: Some("0"), required: false, help: "slots after the warm-up whose VC is reported (meas_trace: the chip's VCI trace, Figs 7 and 11); 0: none", source: "evans96 (traffic measurement chip: the VCI of every cell slot)" },
];

pub const PROBES: [ProbeSpec; 13] = [
    ProbeSpec { name: "meas_idle_cells", unit: "cells", kind: ProbeKind::Counter, help: "slots between the cells seen that carried no cell (idle cells on a framed line; count)" },
    ProbeSpec { name: "meas_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells seen, in all and per monitored VC (<chip>/vc<N>): count, and the 24-bit register (statistic register, wraps at 2^24)" },
    ProbeSpec { name: "meas_stopped", unit: "1", kind: ProbeKind::Gauge, help: "per monitored VC: the stopped flag at the end of the run (value)" },
    ProbeSpec { name: "meas_bursts", unit: "1", kind: ProbeKind::Counter, help: "per monitored VC: bursts the VC was active in, with the same-VC exception (count)" },
    ProbeSpec { name: "meas_burst_size", unit: "cells", kind: ProbeKind::Gauge, help: "per monitored VC: cells / bursts, the β of the adaptive shaper (value)" },
    ProbeSpec { name: "meas_throughput", unit: "Mb/s", kind: ProbeKind::Gauge, help: "cell rate seen, 424 bits per cell, in all and per monitored VC (value)" },
    ProbeSpec { name: "meas_payload_throughput", unit: "Mb/s", kind: ProbeKind::Gauge, help: "ATM payload rate seen, 384 bits per cell (value)" },
    ProbeSpec { name: "meas_window_rate", unit: "Mb/s", kind: ProbeKind::Tally, help: "cell rate (424 bits per cell) over each whole capture window after the warm-up (count, mean, std, min, max)" },
    ProbeSpec { name: "meas_interarrival", unit: "slots", kind: ProbeKind::Tally, help: "slots from one cell to the next on the line, and per monitored VC from one of its cells to the next (count, mean, std, min, max)" },
    ProbeSpec { name: "meas_interarrival_hist", unit: "1", kind: ProbeKind::Histogram, help: "fraction of interarrivals of n slots, on the line and per monitored VC (statistics slots_1 … slots_<hist_slots>, slots_gt_<hist_slots>)" },
    ProbeSpec { name: "meas_idle_hist", unit: "1", kind: ProbeKind::Histogram, help: "fraction of inter-idle-cell times of n slots, from one idle slot to the next (statistics slots_1 …, slots_gt_<hist_slots>)" },
    ProbeSpec { name: "meas_interarrival_acf", unit: "1", kind: ProbeKind::Histogram, help: "autocorrelation of the recorded interarrival sequence at lags 1..acf_lags (statistics lag_<k>)" },
    ProbeSpec { name: "meas_trace", unit: "VC label", kind: ProbeKind::Histogram, help: "the VCI trace: statistic slot_<k> (k slots after the first slot after the warm-up) = the VC label of the cell in it; idle slots have no row" },
];

/// What a chip samples as time series.
pub const SERIES: [SeriesDecl; 1] = [SeriesDecl { name: "meas_throughput", unit: "Mb/s", kind: SeriesKind::Rate, scale: MB_PER_CELL, help: "cell rate seen over each interval, 424 bits per cell" }];

/// The `measurement_chip` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct MeasureParams {
    pub line: LineRateParams,
    /// `framing = "sonet"`.
    pub sonet: bool,
    pub frame_offset: SimDuration,
    pub vcs: Option<Vec<String>>,
    pub max_vcs: usize,
    pub burst_idle_slots: u64,
    pub window: SimDuration,
    pub hist_slots: usize,
    pub acf_lags: usize,
    pub record: usize,
    pub trace_slots: u64,
}

impl MeasureParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(MeasureParams {
            line: LineRateParams::bind(p)?,
            sonet: p.need_choice("framing", &[("none", false), ("sonet", true)])?,
            frame_offset: p.need("frame_offset", Params::time)?,
            vcs: p.opt_list("vcs")?,
            max_vcs: p.need("max_vcs", Params::int)? as usize,
            burst_idle_slots: p.need("burst_idle_slots", Params::int)? as u64,
            window: p.need("window", Params::time)?,
            hist_slots: p.need("hist_slots", Params::int)? as usize,
            acf_lags: p.need("acf_lags", Params::int)? as usize,
            record: p.need("record", Params::int)? as usize,
            trace_slots: p.need("trace_slots", Params::int)? as u64,
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        crate::link::transmitter::sonet_grid(&self.line, self.sonet, "framing")?;
        if self.window.0 == 0 {
            return Err(ParamIssue::new("window", "must be longer than 0 s"));
        }
        if self.vcs.as_ref().is_some_and(|v| v.len() > self.max_vcs) {
            return Err(ParamIssue::new("vcs", format!("lists more VCs than max_vcs = {} (evans96: at most 127)", self.max_vcs)));
        }
        Ok(())
    }
}

/// A histogram of small positive integers: buckets 1..=n and an overflow.
#[derive(Clone, Debug)]
struct SlotHist {
    buckets: Vec<u64>,
    over: u64,
}

impl SlotHist {
    fn new(n: usize) -> Self {
        SlotHist { buckets: vec![0; n], over: 0 }
    }
    fn add(&mut self, x: u64) {
        match (x as usize).checked_sub(1).and_then(|i| self.buckets.get_mut(i)) {
            Some(b) => *b += 1,
            None => self.over += 1,
        }
    }
    fn add_n(&mut self, x: u64, n: u64) {
        match (x as usize).checked_sub(1).and_then(|i| self.buckets.get_mut(i)) {
            Some(b) => *b += n,
            None => self.over += n,
        }
    }
    fn clear(&mut self) {
        self.buckets.iter_mut().for_each(|b| *b = 0);
        self.over = 0;
    }
    fn report(&self, out: &mut Report, path: &str, probe: &'static str) {
        let total = self.buckets.iter().sum::<u64>() + self.over;
        if total == 0 {
            return;
        }
        for (i, &b) in self.buckets.iter().enumerate() {
            out.push(path, probe, &format!("slots_{}", i + 1), b as f64 / total as f64, "1");
        }
        out.push(path, probe, &format!("slots_gt_{}", self.buckets.len()), self.over as f64 / total as f64, "1");
    }
}

/// Sample autocorrelation of `x` at lag `k` (biased estimator, as in Box & Jenkins).
pub fn autocorrelation(x: &[f64], k: usize) -> f64 {
    let n = x.len();
    if n <= k || n < 2 {
        return f64::NAN;
    }
    let mean = x.iter().sum::<f64>() / n as f64;
    let var: f64 = x.iter().map(|v| (v - mean) * (v - mean)).sum();
    if var == 0.0 {
        return f64::NAN;
    }
    let cov: f64 = (0..n - k).map(|i| (x[i] - mean) * (x[i + k] - mean)).sum();
    cov / var
}

/// The `measurement_chip` component.
#[derive(Clone, Debug)]
pub struct MeasureNode {
    params: MeasureParams,
    rate: Rate,
    /// The frame's slot grid (framing = "sonet").
    grid: Option<SonetGrid>,
    chip: MeasurementChip,
    /// Monitor VCs as they appear (no `vcs` list).
    auto: bool,
    /// Slot of the last cell seen.
    last_slot: Option<u64>,
    /// The last idle slot (for inter-idle-cell times).
    last_idle: Option<u64>,
    /// Since the warm-up.
    since: SimTime,
    first_slot: Option<u64>,
    cells: u64,
    /// Idle slots between the cells seen since the warm-up.
    idle_cells: u64,
    vc_cells: BTreeMap<u32, u64>,
    /// Per monitored VC: the slot of its last cell, its interarrivals and their histogram.
    vc_gaps: BTreeMap<u32, (Option<u64>, Tally, SlotHist)>,
    /// All cells ever seen (for series).
    total: u64,
    interarrival: Tally,
    ia_hist: SlotHist,
    idle_hist: SlotHist,
    recorded: Vec<f64>,
    trace: Vec<(u64, u32)>,
    /// Current capture window index and its cells; rates of closed windows.
    window_index: u64,
    window_cells: u64,
    window_rate: Tally,
}

impl MeasureNode {
    pub fn new(params: MeasureParams) -> Result<Self, ParamIssue> {
        let rate = params.line.rate(None)?;
        let mut chip = MeasurementChip::new(params.burst_idle_slots, params.max_vcs);
        let mut auto = true;
        if let Some(list) = &params.vcs {
            auto = false;
            for v in list {
                let label = parse_vc_label(v).map_err(|e| ParamIssue::new("vcs", format!("'{v}': {e}")))?;
                chip.monitor(label);
            }
        }
        let h = params.hist_slots;
        Ok(MeasureNode {
            rate,
            grid: crate::link::transmitter::sonet_grid(&params.line, params.sonet, "framing")?,
            idle_cells: 0,
            chip,
            auto,
            last_slot: None,
            last_idle: None,
            since: SimTime(0),
            first_slot: None,
            cells: 0,
            vc_cells: BTreeMap::new(),
            vc_gaps: BTreeMap::new(),
            total: 0,
            interarrival: Tally::default(),
            ia_hist: SlotHist::new(h),
            idle_hist: SlotHist::new(h),
            recorded: Vec::new(),
            trace: Vec::new(),
            window_index: 0,
            window_cells: 0,
            window_rate: Tally::default(),
            params,
        })
    }

    /// The slot a cell ending at `t` is seen in (framed: the first frame slot ending at
    /// or after `t`, less the frame offset).
    fn slot_of(&self, t: SimTime) -> u64 {
        let k = match &self.grid {
            None => self.rate.slot_after(SimTime(t.0.saturating_sub(1))).saturating_sub(1),
            Some(g) => g.first_ending_at_or_after(t.0.saturating_sub(self.params.frame_offset.0)),
        };
        match self.last_slot {
            Some(s) if k <= s => s + 1,
            _ => k,
        }
    }

    /// Closes the capture windows that ended by `now`.
    fn close_windows(&mut self, now: SimTime) {
        let w = self.params.window.0;
        let idx = now.0.saturating_sub(self.since.0) / w;
        while self.window_index < idx {
            let secs = w as f64 * 1e-12;
            self.window_rate.add(self.window_cells as f64 * CELL_BITS as f64 / secs / 1e6);
            self.window_cells = 0;
            self.window_index += 1;
        }
    }

    fn observe(&mut self, cell: &Cell, now: SimTime) {
        let k = self.slot_of(now);
        let monitored = self.chip.cell(k, cell.vc, self.auto);
        if monitored {
            let h = self.params.hist_slots;
            let e = self.vc_gaps.entry(cell.vc).or_insert_with(|| (None, Tally::default(), SlotHist::new(h)));
            if let Some(s) = e.0 {
                e.1.add((k - s) as f64);
                e.2.add(k - s);
            }
            e.0 = Some(k);
        }
        self.total += 1;
        self.close_windows(now);
        self.window_cells += 1;
        self.cells += 1;
        *self.vc_cells.entry(cell.vc).or_insert(0) += 1;
        let first = *self.first_slot.get_or_insert(k);
        if k - first < self.params.trace_slots {
            self.trace.push((k - first, cell.vc));
        }
        if let Some(s) = self.last_slot {
            let d = k - s;
            self.interarrival.add(d as f64);
            self.ia_hist.add(d);
            if self.recorded.len() < self.params.record {
                self.recorded.push(d as f64);
            }
            if d > 1 {
                // Idle slots s+1 .. k-1: the first is (s+1 − last idle) after the previous
                // idle slot, the others one slot apart.
                if let Some(li) = self.last_idle {
                    self.idle_hist.add(s + 1 - li);
                }
                self.idle_hist.add_n(1, d - 2);
                self.idle_cells += d - 1;
                self.last_idle = Some(k - 1);
            }
        }
        self.last_slot = Some(k);
    }

    /// Cells seen since the warm-up, in all or on one VC.
    fn seen(&self, vc: Option<u32>) -> u64 {
        match vc {
            None => self.total,
            Some(v) => self.chip.read(v).map_or(0, |r| r.cells as u64),
        }
    }
}

impl crate::kind::Kind for MeasureNode {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let _ = b;
        let params = MeasureParams::bind(p)?;
        params.validate()?;
        MeasureNode::new(params)
    }
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        self.observe(&cell, ctx.now);
        ctx.send(0, Msg::Cell(cell));
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        self.first_slot = None;
        self.cells = 0;
        self.idle_cells = 0;
        self.vc_cells.clear();
        for e in self.vc_gaps.values_mut() {
            e.1.reset();
            e.2.clear();
        }
        self.interarrival.reset();
        self.ia_hist.clear();
        self.idle_hist.clear();
        self.recorded.clear();
        self.trace.clear();
        self.window_index = 0;
        self.window_cells = 0;
        self.window_rate.reset();
        let vcs: Vec<u32> = self.chip.vcs().map(|(v, _)| v).collect();
        for v in vcs {
            self.chip.read_and_clear(v);
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).0 as f64 * 1e-12;
        let mbps = |cells: u64, bits: u64| if secs > 0.0 { cells as f64 * bits as f64 / secs / 1e6 } else { 0.0 };
        out.push(path, "meas_cells", "count", self.cells as f64, "cells");
        out.push(path, "meas_idle_cells", "count", self.idle_cells as f64, "cells");
        out.push(path, "meas_throughput", "value", mbps(self.cells, CELL_BITS), "Mb/s");
        out.push(path, "meas_payload_throughput", "value", mbps(self.cells, 384), "Mb/s");
        let mut w = self.window_rate.clone();
        // Windows that ended by the end of the run.
        let wl = self.params.window.0;
        let done = now.0.saturating_sub(self.since.0) / wl;
        let mut idx = self.window_index;
        let mut cells = self.window_cells;
        while idx < done {
            w.add(cells as f64 * CELL_BITS as f64 / (wl as f64 * 1e-12) / 1e6);
            cells = 0;
            idx += 1;
        }
        w.report(out, path, "meas_window_rate", "Mb/s", 1.0);
        self.interarrival.report(out, path, "meas_interarrival", "slots", 1.0);
        self.ia_hist.report(out, path, "meas_interarrival_hist");
        self.idle_hist.report(out, path, "meas_idle_hist");
        for k in 1..=self.params.acf_lags {
            let r = autocorrelation(&self.recorded, k);
            if r.is_finite() {
                out.push(path, "meas_interarrival_acf", &format!("lag_{k}"), r, "1");
            }
        }
        for &(k, vc) in &self.trace {
            out.push(path, "meas_trace", &format!("slot_{k}"), vc as f64, "VC label");
        }
        for (vc, regs) in self.chip.vcs() {
            let sub = format!("{path}/{}", vc_name(vc));
            let n = self.vc_cells.get(&vc).copied().unwrap_or(0);
            out.push(&sub, "meas_cells", "count", n as f64, "cells");
            out.push(&sub, "meas_cells", "register", regs.cells as f64, "cells");
            out.push(&sub, "meas_stopped", "value", if regs.stopped { 1.0 } else { 0.0 }, "1");
            out.push(&sub, "meas_bursts", "count", regs.bursts as f64, "1");
            if regs.bursts > 0 {
                out.push(&sub, "meas_burst_size", "value", n as f64 / regs.bursts as f64, "cells");
            }
            out.push(&sub, "meas_throughput", "value", mbps(n, CELL_BITS), "Mb/s");
            if let Some((_, t, h)) = self.vc_gaps.get(&vc) {
                t.report(out, &sub, "meas_interarrival", "slots", 1.0);
                h.report(out, &sub, "meas_interarrival_hist");
            }
        }
    }
    fn ledger(&self, _l: &mut Ledger) {}
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let vc = if sub.is_empty() { 0 } else { crate::series::parse_vc_name(sub)? as u64 + 1 };
        Some(crate::series::code(vc, crate::series::find(&SERIES, name)?))
    }
    fn sample(&self, index: u64) -> f64 {
        self.seen(crate::series::split(index).0.checked_sub(1).map(|l| l as u32)) as f64
    }
}

/// The `measurement_chip` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "measurement_chip",
    help: "evans96's gateway measurement chips on a slotted line (pass-through): per-VC 24-bit cell count, stopped flag, burst count with the same-VC exception; interarrival and inter-idle histograms, autocorrelation, VCI trace, capture-window rates",
    source: "evans96 (traffic and pacing measurement FPGAs)",
    params: &[&PARAMS],
    inputs: &crate::kind::IN_MANY,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&PROBES],
    series: &[crate::series::KindSeries { at: "", series: &SERIES }, crate::series::KindSeries { at: "vc<N>", series: &SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates::PASSES,
    observed: crate::kind::Observed::NONE,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives a chip with (slot, vc) cells and returns the registers of `vcs`.
    fn run(idle: u64, cells: &[(u64, u32)], vcs: &[u32]) -> Vec<VcRegisters> {
        let mut c = MeasurementChip::new(idle, 127);
        for &(s, v) in cells {
            c.cell(s, v, true);
        }
        vcs.iter().map(|&v| c.read(v).unwrap_or_default()).collect()
    }

    #[test]
    fn the_cell_count_wraps_at_two_to_the_24() {
        let mut c = MeasurementChip::new(2, 127);
        let n: u64 = (1 << 24) + 5;
        for s in 0..n {
            c.cell(s, 7, true);
        }
        assert_eq!(c.read(7).map(|r| r.cells), Some(5), "16,777,216 + 5 cells read as 5");
        assert_eq!(c.read(7).map(|r| r.bursts), Some(1), "one unbroken burst");
    }

    #[test]
    fn two_idle_slots_end_a_burst_one_does_not() {
        // VC 1 in slots 0, 2 (one idle slot between): one burst; then 5 (two idle): a second.
        assert_eq!(run(2, &[(0, 1), (2, 2), (5, 1)], &[1, 2]).iter().map(|r| r.bursts).collect::<Vec<_>>(), vec![2, 1]);
        // With one idle slot ending a burst, slot 2 opens a new burst for VC 2.
        assert_eq!(run(1, &[(0, 1), (1, 1), (3, 2)], &[1, 2]).iter().map(|r| r.bursts).collect::<Vec<_>>(), vec![1, 1]);
    }

    #[test]
    fn a_single_vc_every_other_slot_is_one_burst_by_the_same_vc_exception() {
        // The AN2's every-other-slot source seen with one idle slot ending a burst: every
        // cell opens a burst, but the opener is the VC of the last cell, so it is one.
        let cells: Vec<(u64, u32)> = (0..50).map(|k| (2 * k, 9)).collect();
        assert_eq!(run(1, &cells, &[9])[0].bursts, 1);
        assert_eq!(run(1, &cells, &[9])[0].cells, 50);
        // Another VC between breaks the exception: VC 9, VC 4, idle, VC 9 → VC 9 twice.
        assert_eq!(run(1, &[(0, 9), (1, 4), (3, 9)], &[9, 4]).iter().map(|r| r.bursts).collect::<Vec<_>>(), vec![2, 1]);
    }

    #[test]
    fn every_vc_active_in_a_burst_counts_it_once() {
        let r = run(2, &[(0, 1), (1, 2), (2, 1), (3, 2), (10, 2)], &[1, 2]);
        assert_eq!((r[0].bursts, r[1].bursts), (1, 1), "the burst at 10 opens with VC 2, the last cell's VC");
        let r = run(2, &[(0, 1), (1, 2), (2, 1), (10, 2)], &[1, 2]);
        assert_eq!((r[0].bursts, r[1].bursts), (1, 2));
    }

    #[test]
    fn stopped_stays_set_until_a_cell_of_the_vc() {
        let mut c = MeasurementChip::new(2, 127);
        c.cell(0, 3, true);
        c.stop(3);
        assert_eq!(c.read(3).map(|r| r.stopped), Some(true));
        c.cell(1, 5, true);
        assert_eq!(c.read(3).map(|r| r.stopped), Some(true), "another VC's cell does not clear it");
        c.cell(2, 3, true);
        assert_eq!(c.read(3).map(|r| r.stopped), Some(false));
    }

    #[test]
    fn read_and_clear_zeroes_the_counts_and_the_table_holds_max_vcs() {
        let mut c = MeasurementChip::new(2, 2);
        c.cell(0, 1, true);
        c.cell(1, 2, true);
        assert!(!c.cell(2, 3, true), "a third VC does not fit a 2-entry table");
        assert_eq!(c.read(3), None);
        assert_eq!(c.read_and_clear(1), Some(VcRegisters { cells: 1, stopped: false, bursts: 1 }));
        assert_eq!(c.read(1), Some(VcRegisters::default()));
    }

    #[test]
    fn autocorrelation_of_an_alternating_sequence() {
        let x: Vec<f64> = (0..1000).map(|i| if i % 2 == 0 { 1.0 } else { 3.0 }).collect();
        assert!((autocorrelation(&x, 1) + 1.0).abs() < 0.01);
        assert!((autocorrelation(&x, 2) - 1.0).abs() < 0.01);
        assert!(autocorrelation(&[2.0; 10], 1).is_nan(), "no variance, no correlation");
    }

    #[test]
    fn slot_histogram_buckets_and_overflow() {
        let mut h = SlotHist::new(3);
        for x in [1, 1, 2, 3, 4, 9] {
            h.add(x);
        }
        assert_eq!((h.buckets.clone(), h.over), (vec![2, 1, 1], 2));
    }
}
