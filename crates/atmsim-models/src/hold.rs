//! The classic hold model (Vaucher & Duval 1975; Jones 1986), the standard benchmark of
//! future-event-list speed: `pending` events are kept scheduled; each one, when it
//! fires, schedules one more after an exponential delay. It exercises only the kernel,
//! through the same dispatch every real model uses (`atmsim bench`).

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::Ledger;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{SimDuration, SimTime, Stream};

use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::series::SeriesDecl;
use atmsim_kernel::SeriesKind;
use crate::traffic::exp_ps;

pub const PARAMS: [ParamSpec; 2] = [
    ParamSpec { name: "pending", ty: ParamType::Int { min: 1, max: 100_000_000 }, default: Some("10000"), required: false, help: "events kept pending", source: "hold-model convention" },
    ParamSpec { name: "mean", ty: ParamType::Time, default: Some("1 us"), required: false, help: "mean of the exponential hold time", source: "hold-model convention" },
];

pub const PROBES: [ProbeSpec; 1] = [ProbeSpec { name: "hold_events", unit: "1", kind: ProbeKind::Counter, help: "events handled (count)" }];

pub const SERIES: [SeriesDecl; 1] = [SeriesDecl { name: "hold_events", unit: "1/s", kind: SeriesKind::Rate, scale: 1.0, help: "events handled per second over each interval" }];

/// The `hold` kind's parameters, bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HoldParams {
    /// Events kept pending.
    pub pending: u64,
    /// Mean hold time.
    pub mean: SimDuration,
}

impl HoldParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(HoldParams { pending: p.need("pending", Params::int)? as u64, mean: p.need("mean", Params::time)? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        if self.mean.ps() == 0 {
            return Err(ParamIssue::new("mean", "the hold time must be positive"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Hold {
    pending: u64,
    mean_ps: f64,
    handled: u64,
    rng: Stream,
}

impl Hold {
    pub fn new(params: HoldParams, rng: Stream) -> Self {
        Hold { pending: params.pending, mean_ps: params.mean.ps() as f64, handled: 0, rng }
    }
    pub fn sample(&self) -> f64 {
        self.handled as f64
    }
}

impl crate::kind::Kind for Hold {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = HoldParams::bind(p)?;
        params.validate()?;
        Ok(Hold::new(params, b.stream("hold")))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        for _ in 0..self.pending {
            let d = exp_ps(&mut self.rng, self.mean_ps);
            ctx.schedule_in(SimDuration(d), 0);
        }
    }
    #[inline(always)]
    fn on_timer(&mut self, _tag: u32, ctx: &mut Cx<'_>) {
        self.handled += 1;
        let d = exp_ps(&mut self.rng, self.mean_ps);
        ctx.schedule_in(SimDuration(d), 0);
    }
    fn reset_stats(&mut self, _now: SimTime) {
        self.handled = 0;
    }
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        out.push(path, "hold_events", "count", self.handled as f64, "1");
    }
    fn ledger(&self, _l: &mut Ledger) {}
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        if sub.is_empty() { crate::series::find(&SERIES, name) } else { None }
    }
    fn sample(&self, _index: u64) -> f64 {
        self.handled as f64
    }
}

/// The `hold` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "hold",
    help: "hold-model benchmark workload: keeps N exponential timers pending",
    source: "Vaucher & Duval 1975 hold model",
    params: &[&crate::hold::PARAMS],
    inputs: &[],
    outputs: &[],
    ports: None,
    probes: &[&crate::hold::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::hold::SERIES }],
    is_source: false,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};
