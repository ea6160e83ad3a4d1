//! Poisson cell source: exponential inter-cell times at a mean rate.

use atmsim_kernel::{Ctx, Rate, SimDuration, SimTime, Stream};

use super::{exp_ps, Source, SourceCore};
use crate::cell::Msg;
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
    fn next(&mut self, from: SimTime, ctx: &mut Ctx<'_, Msg>) {
        let t = from.plus(SimDuration(exp_ps(&mut self.rng, self.mean_gap_ps)));
        if t < self.core.stop {
            ctx.schedule_at(t, 0);
        }
    }

    pub fn start(&mut self, ctx: &mut Ctx<'_, Msg>) {
        let s = self.core.start;
        self.next(s, ctx);
    }
    #[inline(always)]
    pub fn on_timer(&mut self, ctx: &mut Ctx<'_, Msg>) {
        self.core.emit(ctx);
        let now = ctx.now;
        self.next(now, ctx);
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
