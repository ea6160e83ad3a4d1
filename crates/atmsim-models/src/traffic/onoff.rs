//! The two-state Markov on-off source of buddhikot92 (section 5, Figure 8).
//!
//! The source alternates between an active and an idle state, each of exponentially
//! distributed duration; while active it emits Poisson cells at the peak rate Λp, while
//! idle nothing. The paper characterises it by ⟨Λp, Λa, B⟩: peak rate, average rate and
//! a burst factor B, "a measure of the amount by which the average bandwidth is exceeded
//! during an active period", without a formula. atmsim reads that definition literally:
//! B is the mean number of cells an active period carries *in excess of* what the average
//! rate would carry in the same time,
//!
//! ```text
//!   B = (Λp − Λa) · E[T_on]          (Λ in cells/s, B in cells)
//!   E[T_on]  = B / (Λp − Λa)
//!   E[T_off] = E[T_on] · (Λp/Λa − 1)   so that the long-run rate is Λa
//!   mean burst length = Λp · E[T_on] = B · Λp / (Λp − Λa) cells
//! ```
//!
//! With Λp/Λa = 2 and B = 1000 an active period carries 2000 cells on average.
//! This mapping is an interpretation (documented in docs/models/traffic.md); the
//! parameters `mean_on`/`mean_off` are not offered so that there is one way to say it.
//! The initial state is drawn from the stationary distribution (active with
//! probability Λa/Λp), so there is no start-up transient.

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::units::Size;
use atmsim_kernel::{Rate, SimDuration, SimTime, Stream, Tally};
use rand::Rng;

use super::{exp_ps, Source, SourceCore, SourceParams};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

pub const PARAMS: [ParamSpec; 4] = [
    ParamSpec { name: "peak", ty: ParamType::Rate, default: None, required: true, help: "peak rate Λp: Poisson cell rate while active", source: "buddhikot92 section 5" },
    ParamSpec { name: "mean", ty: ParamType::Rate, default: None, required: true, help: "average rate Λa (must be below peak)", source: "buddhikot92 section 5" },
    ParamSpec { name: "burst_factor", ty: ParamType::Size, default: None, required: true, help: "burst factor B in cells: mean excess over the average rate per active period, E[T_on] = B/(Λp−Λa)", source: "buddhikot92 section 5 (250, 500, 1000 in Table 3)" },
    ParamSpec { name: "wucs_segment", ty: ParamType::Int { min: 1, max: 65_535 }, default: None, required: false, help: "cells per MCHIP segment: the source's cells carry the WUCS SAR marks (F on the first cell of each segment, C = 0, i.e. end of PDU, on its last) for an atm_fddi_gateway (default: plain cells)", source: "buddhikot92 Table 3 (frame size assembled: 85 cells)" },
];

pub const PROBES: [ProbeSpec; 1] = [ProbeSpec {
    name: "src_burst_cells",
    unit: "cells",
    kind: ProbeKind::Tally,
    help: "cells per completed active period (statistics count, mean, std, min, max)",
}];

const TAG_CELL: u32 = 0;
const TAG_SWITCH: u32 = 1;

/// The `onoff` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct OnOffParams {
    pub peak: Rate,
    pub mean: Rate,
    /// B, in cells (bytes are refused by `validate`).
    pub burst_factor: Size,
    pub wucs_segment: Option<u32>,
    pub source: SourceParams,
}

impl OnOffParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(OnOffParams { peak: p.need("peak", Params::rate)?, mean: p.need("mean", Params::rate)?, burst_factor: p.need("burst_factor", Params::size)?, wucs_segment: p.opt("wucs_segment", Params::int)?.map(|n| n as u32), source: SourceParams::bind(p)? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.burst_cells()?;
        self.source.validate()
    }

    /// B in cells, checked against the rates.
    fn burst_cells(&self) -> Result<f64, ParamIssue> {
        if self.mean >= self.peak {
            return Err(ParamIssue::new("mean", "the average rate must be below the peak rate"));
        }
        let b = match self.burst_factor {
            Size::Cells(c) => c,
            Size::Bytes(_) => return Err(ParamIssue::new("burst_factor", "give the burst factor in cells, e.g. \"1000 cells\"")),
        };
        if b <= 0.0 {
            return Err(ParamIssue::new("burst_factor", "the burst factor must be positive"));
        }
        Ok(b)
    }
}

#[derive(Clone, Debug)]
pub struct OnOff {
    core: SourceCore,
    peak_gap_ps: f64,
    mean_on_ps: f64,
    mean_off_ps: f64,
    p_on: f64,
    active: bool,
    on_end: SimTime,
    burst: u64,
    bursts: Tally,
    rng: Stream,
    /// WUCS segment size (cells) and the position of the next cell in its segment.
    wucs: Option<(u32, u32)>,
}

impl OnOff {
    pub fn new(params: OnOffParams, flow: u32, rng: Stream) -> Result<Self, ParamIssue> {
        let b = params.burst_cells()?;
        let (peak, mean) = (params.peak, params.mean);
        let (lp, la) = (peak.cells_per_s(), mean.cells_per_s());
        let t_on = b / (lp - la);
        let t_off = t_on * (lp / la - 1.0);
        Ok(OnOff {
            core: SourceCore::new(&params.source, flow),
            peak_gap_ps: peak.mean_cell_gap_ps(),
            mean_on_ps: t_on * 1e12,
            mean_off_ps: t_off * 1e12,
            p_on: la / lp,
            active: false,
            on_end: SimTime::ZERO,
            burst: 0,
            bursts: Tally::default(),
            rng,
            wucs: params.wucs_segment.map(|n| (n, 0)),
        })
    }

    /// In the active state: schedule the next cell, or the end of the period.
    fn step_active(&mut self, from: SimTime, ctx: &mut Cx<'_>) {
        let t = from.plus(SimDuration(exp_ps(&mut self.rng, self.peak_gap_ps)));
        if t < self.on_end {
            if t < self.core.stop {
                ctx.schedule_at(t, TAG_CELL);
            }
        } else if self.on_end < self.core.stop {
            ctx.schedule_at(self.on_end, TAG_SWITCH);
        }
    }

    fn go_active(&mut self, from: SimTime, ctx: &mut Cx<'_>) {
        self.active = true;
        self.burst = 0;
        self.on_end = from.plus(SimDuration(exp_ps(&mut self.rng, self.mean_on_ps)));
        self.step_active(from, ctx);
    }



}

impl Source for OnOff {
    fn core(&self) -> &SourceCore {
        &self.core
    }
    fn core_mut(&mut self) -> &mut SourceCore {
        &mut self.core
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.core.reset_stats(now);
        self.bursts.reset();
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        self.core.report(now, path, out);
        self.bursts.report(out, path, "src_burst_cells", "cells", 1.0);
    }
}

impl crate::kind::Kind for OnOff {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = OnOffParams::bind(p)?;
        params.validate()?;
        OnOff::new(params, b.flow, b.stream("onoff"))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        let s = self.core.start;
        if self.rng.random::<f64>() < self.p_on {
            self.go_active(s, ctx);
        } else {
            self.active = false;
            let t = s.plus(SimDuration(exp_ps(&mut self.rng, self.mean_off_ps)));
            if t < self.core.stop {
                ctx.schedule_at(t, TAG_SWITCH);
            }
        }
    }
    #[inline(always)]
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        match tag {
            TAG_CELL => {
                match self.wucs.as_mut() {
                    None => self.core.emit(ctx),
                    Some((n, k)) => {
                        let mut flags = 0;
                        if *k == 0 {
                            flags |= crate::gateway::wucs_sar::FLAG_FIRST;
                        }
                        if *k + 1 == *n {
                            flags |= crate::cell::FLAG_EOP;
                        }
                        *k = (*k + 1) % *n;
                        self.core.emit_with(ctx, flags, crate::payload::PayloadId::NONE);
                    }
                }
                self.burst += 1;
                self.step_active(now, ctx);
            }
            _ if self.active => {
                self.bursts.add(self.burst as f64);
                self.active = false;
                let t = now.plus(SimDuration(exp_ps(&mut self.rng, self.mean_off_ps)));
                if t < self.core.stop {
                    ctx.schedule_at(t, TAG_SWITCH);
                }
            }
            _ => self.go_active(now, ctx),
        }
    }
    crate::traffic::source_kind!();
}

/// The mean cell rate of an `onoff` source (the load-time check of offered load).
fn offered(p: &Params) -> Option<f64> {
    OnOffParams::bind(p).ok().map(|q| q.mean.bps())
}

/// The `onoff` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::traffic::source_info(
    "onoff",
    "two-state Markov on-off source ⟨peak, mean, burst factor⟩ with Poisson cells while active",
    "buddhikot92 section 5, Figure 8",
    &[&crate::traffic::onoff::PARAMS, &crate::traffic::COMMON_PARAMS, &crate::traffic::CLP_PARAMS],
    &[&crate::traffic::SOURCE_PROBES, &crate::traffic::onoff::PROBES],
    offered,
);
