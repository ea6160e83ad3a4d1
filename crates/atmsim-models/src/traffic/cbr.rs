//! Constant-bit-rate cell source.
//!
//! Cell k (k = 0, 1, …) leaves at `start + phase + ceil(k · 424 bit / rate)`, computed
//! from the counter so that no rounding accumulates. With `phase = "random"` the phase
//! is uniform over one cell period, drawn once per run from the component's own stream
//! (the N·D/D/1 model of Roberts & Virtamo).

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::{Rate, SimDuration, SimTime, Stream, CELL_BITS};
use rand::Rng;

use super::{Source, SourceCore, SourceParams};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params, Value};

pub const PARAMS: [ParamSpec; 3] = [
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "cell rate (424 bits per cell); give rate or interval", source: "required (rate or interval)" },
    ParamSpec { name: "interval", ty: ParamType::Time, default: None, required: false, help: "time between cells; give rate or interval", source: "required (rate or interval)" },
    ParamSpec { name: "phase", ty: ParamType::TimeOr("random"), default: Some("random"), required: false, help: "offset of the first cell after start; \"random\" = uniform over one period, drawn per run", source: "atmsim convention (random phases as in N·D/D/1 analyses)" },
];

/// Where the first cell goes after `start`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Uniform over one cell period, drawn per run.
    Random,
    At(SimDuration),
}

/// The `cbr` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct CbrParams {
    pub rate: Option<Rate>,
    pub interval: Option<SimDuration>,
    pub phase: Phase,
    pub source: SourceParams,
}

impl CbrParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        let phase = match p.get("phase") {
            Some(Value::Word(_)) => Phase::Random,
            _ => Phase::At(p.need("phase", Params::time)?),
        };
        Ok(CbrParams { rate: p.opt("rate", Params::rate)?, interval: p.opt("interval", Params::time)?, phase, source: SourceParams::bind(p)? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.cell_rate()?;
        self.source.validate()
    }

    /// The cell rate, given as `rate` or as `interval` (one of them).
    pub fn cell_rate(&self) -> Result<Rate, ParamIssue> {
        match (self.rate, self.interval) {
            (Some(_), Some(_)) => Err(ParamIssue::new("interval", "give either rate or interval, not both")),
            (Some(r), None) => Ok(r),
            (None, Some(i)) => {
                if i.ps() == 0 {
                    return Err(ParamIssue::new("interval", "interval must be positive"));
                }
                Rate::from_bps(CELL_BITS as f64 / i.as_secs_f64()).ok_or_else(|| ParamIssue::new("interval", "interval too long"))
            }
            (None, None) => Err(ParamIssue::new("rate", "a cbr source needs rate or interval")),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cbr {
    core: SourceCore,
    rate: Rate,
    phase: Phase,
    t0: SimTime,
    k: u64,
    rng: Stream,
}

impl Cbr {
    pub fn new(params: CbrParams, flow: u32, rng: Stream) -> Result<Self, ParamIssue> {
        let rate = params.cell_rate()?;
        Ok(Cbr { core: SourceCore::new(&params.source, flow), rate, phase: params.phase, t0: SimTime::ZERO, k: 0, rng })
    }

    fn schedule_next(&mut self, ctx: &mut Cx<'_>) {
        let t = self.t0.plus(self.rate.cell_train_offset(self.k));
        if t < self.core.stop {
            ctx.schedule_at(t, 0);
        }
    }

}

impl Source for Cbr {
    fn core(&self) -> &SourceCore {
        &self.core
    }
    fn core_mut(&mut self) -> &mut SourceCore {
        &mut self.core
    }
}

impl crate::kind::Kind for Cbr {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = CbrParams::bind(p)?;
        params.validate()?;
        Cbr::new(params, b.flow, b.stream("phase"))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        let period = self.rate.cell_slot().ps();
        let phase = match self.phase {
            Phase::At(p) => p,
            Phase::Random => SimDuration(self.rng.random_range(0..period.max(1))),
        };
        self.t0 = self.core.start.plus(phase);
        self.schedule_next(ctx);
    }
    fn on_timer(&mut self, _tag: u32, ctx: &mut Cx<'_>) {
        self.core.emit(ctx);
        self.k += 1;
        self.schedule_next(ctx);
    }
    crate::traffic::source_kind!();
}

/// The cell rate of a `cbr` source (the load-time check of offered load).
fn offered(p: &Params) -> Option<f64> {
    CbrParams::bind(p).ok()?.cell_rate().ok().map(Rate::bps)
}

/// The `cbr` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::traffic::source_info(
    "cbr",
    "constant-bit-rate cell source (fixed or random phase)",
    "ITU-T I.371 CBR; N·D/D/1 random phases (Roberts & Virtamo 1991)",
    &[&crate::traffic::cbr::PARAMS, &crate::traffic::COMMON_PARAMS, &crate::traffic::CLP_PARAMS],
    &[&crate::traffic::SOURCE_PROBES],
    offered,
);
