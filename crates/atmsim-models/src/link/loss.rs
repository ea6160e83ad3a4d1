//! Independent random cell loss: each cell is dropped with probability `p` (cause
//! `random_loss`), independently of every other. The baseline against which the
//! correlated losses of a congested buffer are compared (domingo95): with it a PDU of
//! n cells survives with probability (1 − p)^n.
//!
//! ```text
//!   in ──►[ drop with probability p ]──► out
//! ```

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::PortId;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, SimTime, Stream};
use rand::Rng;

use crate::drops::Drops;
use crate::cell::{Cell, Msg};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

pub const PARAMS: [ParamSpec; 1] = [ParamSpec { name: "p", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: None, required: true, help: "probability that a cell is dropped", source: "scenario" }];

pub const PROBES: [ProbeSpec; 2] = [
    ProbeSpec { name: "loss_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells arriving (count)" },
    ProbeSpec { name: "loss_drop_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped (count)" },
];

/// The `loss` kind's parameters, bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossParams {
    /// Probability that a cell is dropped.
    pub p: f64,
}

impl LossParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(LossParams { p: p.need("p", Params::float)? })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct Loss {
    p: f64,
    rng: Stream,
    rx: u64,
    dropped: u64,
    drops: Drops,
}

impl Loss {
    pub fn new(params: LossParams, rng: Stream) -> Self {
        Loss { p: params.p, rng, rx: 0, dropped: 0, drops: Drops::new("random_loss") }
    }




}

impl crate::kind::Kind for Loss {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = LossParams::bind(p)?;
        params.validate()?;
        Ok(Loss::new(params, b.stream("loss")))
    }
    #[inline]
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        self.rx += 1;
        if self.rng.random::<f64>() < self.p {
            self.dropped += 1;
            self.drops.drop(&cell, ctx);
        } else {
            ctx.send(0, Msg::Cell(cell));
        }
    }
    fn reset_stats(&mut self, _now: SimTime) {
        self.rx = 0;
        self.dropped = 0;
    }
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        out.push(path, "loss_rx_cells", "count", self.rx as f64, "cells");
        out.push(path, "loss_drop_cells", "count", self.dropped as f64, "cells");
    }
    fn ledger(&self, l: &mut Ledger) {
        self.drops.ledger(l);
    }
}

/// The `loss` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "loss",
    help: "independent random cell loss with probability p",
    source: "baseline of domingo95's correlated-loss argument",
    params: &[&crate::link::loss::PARAMS],
    inputs: &crate::kind::IN_ONE,
    outputs: &crate::kind::OUT,
    ports: None,
    probes: &[&crate::link::loss::PROBES],
    series: &[],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates::PASSES,
    observed: crate::kind::Observed::NONE,
};
