//! Poisson cell source: exponential inter-cell times at a mean rate.

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::{Rate, SimDuration, SimTime, Stream};

use super::{exp_ps, Source, SourceCore};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

pub const PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "rate",
    ty: ParamType::Rate,
    default: None,
    required: true,
    help: "mean cell rate (424 bits per cell; e.g. \"134.784 Mb/s\" or \"317886 cells/s\")",
    source: "required",
}];

#[derive(Clone, Debug)]
pub struct Poisson {
    core: SourceCore,
    mean_gap_ps: f64,
    rng: Stream,
}

impl Poisson {
    pub fn new(p: &Params, flow: u32, rng: Stream) -> Result<Self, ParamIssue> {
        let rate: Rate = p.rate("rate").ok_or_else(|| ParamIssue::new("rate", "missing"))?;
        Ok(Poisson { core: SourceCore::from_params(p, flow)?, mean_gap_ps: rate.mean_cell_gap_ps(), rng })
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
        Poisson::new(p, b.flow, b.stream("arrivals"))
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

/// The `poisson` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "poisson",
    help: "Poisson cell source",
    source: "classic M/·/· arrivals",
    params: &[&crate::traffic::poisson::PARAMS, &crate::traffic::COMMON_PARAMS],
    inputs: &[],
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::traffic::SOURCE_PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::traffic::SOURCE_SERIES }],
    is_source: true,
};
