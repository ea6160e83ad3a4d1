//! Poisson cell source: exponential inter-cell times at a mean rate.

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::{Rate, SimDuration, SimTime, Stream};

use super::{exp_ps, Source, SourceCore, SourceParams};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

pub const PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "rate",
    ty: ParamType::Rate,
    default: None,
    required: true,
    help: "mean cell rate (424 bits per cell; e.g. \"134.784 Mb/s\" or \"317886 cells/s\")",
    source: "required",
}];

/// The `poisson` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct PoissonParams {
    pub rate: Rate,
    pub source: SourceParams,
}

impl PoissonParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(PoissonParams { rate: p.need("rate", Params::rate)?, source: SourceParams::bind(p)? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.source.validate()
    }
}

#[derive(Clone, Debug)]
pub struct Poisson {
    core: SourceCore,
    mean_gap_ps: f64,
    rng: Stream,
}

impl Poisson {
    pub fn new(params: PoissonParams, flow: u32, rng: Stream) -> Self {
        Poisson { core: SourceCore::new(&params.source, flow), mean_gap_ps: params.rate.mean_cell_gap_ps(), rng }
    }

    #[inline(always)]
    fn next(&mut self, from: SimTime, ctx: &mut Cx<'_>) {
        let t = from.plus(SimDuration(exp_ps(&mut self.rng, self.mean_gap_ps)));
        if t < self.core.stop {
            ctx.schedule_at(t, 0);
        }
    }

}

impl Source for Poisson {
    fn core(&self) -> &SourceCore {
        &self.core
    }
    fn core_mut(&mut self) -> &mut SourceCore {
        &mut self.core
    }
}

impl crate::kind::Kind for Poisson {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = PoissonParams::bind(p)?;
        params.validate()?;
        Ok(Poisson::new(params, b.flow, b.stream("arrivals")))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        let s = self.core.start;
        self.next(s, ctx);
    }
    #[inline(always)]
    fn on_timer(&mut self, _tag: u32, ctx: &mut Cx<'_>) {
        self.core.emit(ctx);
        let now = ctx.now;
        self.next(now, ctx);
    }
    crate::traffic::source_kind!();
}

/// The mean cell rate of a `poisson` source (the load-time check of offered load).
fn offered(p: &Params) -> Option<f64> {
    PoissonParams::bind(p).ok().map(|q| q.rate.bps())
}

/// The `poisson` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::traffic::source_info(
    "poisson",
    "Poisson cell source",
    "classic M/·/· arrivals",
    &[&crate::traffic::poisson::PARAMS, &crate::traffic::COMMON_PARAMS, &crate::traffic::CLP_PARAMS],
    &[&crate::traffic::SOURCE_PROBES],
    offered,
);
