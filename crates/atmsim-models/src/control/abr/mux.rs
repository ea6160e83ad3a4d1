//! The `abr_mux` kind: a stand-alone ABR multiplexer — the `fifo` transmitter (buffer,
//! line rate, optional propagation, buffer policies) with a switch algorithm that
//! reads the ABR cells crossing its buffer and writes into the backward RM cells of
//! the same connections, which cross it on a second input/output pair.
//!
//! ```text
//!   in (many) ──>[ buffer | server @ rate ]──( propagation )──> out
//!                  │ algorithm: measures the forward cells, the queue
//!   back_out <─────┴──────────────────────────────────────────── back_in (many)
//!              (ER / CI written into backward RM cells; no delay, no queue)
//! ```
//!
//! `algorithm`:
//! - `efci`: EFCI marking by the buffer policy (`efci_threshold`, required): data
//!   cells leaving a buffer above it carry EFCI, and the destinations set CI;
//!   backward RM cells pass unchanged.
//! - `eprca`: EPRCA explicit rate with intelligent marking ([`Eprca`]): MACR from the
//!   forward RM cells' CCR, the fair share DPF·MACR written into backward RM cells
//!   while the queue is above `qt`, MRF·MACR and CI above `dqt`.
//! - `erica`: ERICA ([`Erica`]): every cell arriving on `in` is counted as ABR input;
//!   the measured fair share and VC share written into backward RM cells as ER.
//!
//! The VC → forward port map of a switch is trivial here: the multiplexer has one
//! forward port, and a backward RM cell carries the VC label its forward cells
//! carried (no translation in between; the connection is recognised by that label).
//! The forward path keeps the `fifo` kind's code: this kind wraps a [`Transmitter`].
//! The algorithms themselves, shared with the `switch` kind's output ports, are
//! [`super::port`]'s, ERICA+ queue control included (`erica_plus`). As at a switch
//! port, a cell counts as ABR input once a forward RM cell of its VC label has crossed;
//! the others (CBR, VBR) are taken off the line rate before ERICA's target utilisation.

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, PortId, SimTime};

use super::port::{forward_rm, AlgorithmParams, PortAbr, PortAbrParams, NAMES};
use crate::cell::{Cell, Msg};
use crate::kind::{BuildInfo, Cx, Kind, KindInfo, PortSpec};
use crate::link::transmitter::{self, Transmitter, TransmitterParams, FIFO_PARAMS};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;
use crate::series::KindSeries;

pub const PARAMS: [ParamSpec; 1] = [
    ParamSpec { name: "algorithm", ty: ParamType::Choice(&["efci", "eprca", "erica", "erica+"]), default: None, required: true, help: "switch algorithm: EFCI marking (needs efci_threshold), EPRCA explicit rate with intelligent marking, ERICA, or ERICA+ (ERICA with the queue control, as erica with erica_plus = true)", source: "issue 15; dastangoo96 (EFCI), 94-0735R1 (EPRCA), 96-1172 (ERICA)" },
];

pub const PROBES: [ProbeSpec; 1] = [
    ProbeSpec { name: "abr_back_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells that crossed the backward pair (count)" },
];

/// The `abr_mux` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct AbrMuxParams {
    pub fifo: TransmitterParams,
    pub algorithm: AlgorithmParams,
}

impl AbrMuxParams {
    /// Reads each parameter once, as declared, and checks them against each other
    /// (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        let fifo = TransmitterParams::bind(p)?;
        let which = p.need_choice("algorithm", &NAMES)?;
        let port = PortAbrParams::bind(p)?;
        fifo.validate()?;
        let link_rate = fifo.line.rate(None)?.cells_per_s();
        let algorithm = port.algorithm(which, link_rate, fifo.policy.efci_threshold.is_some())?;
        Ok(AbrMuxParams { fifo, algorithm })
    }
}

#[derive(Clone, Debug)]
pub struct AbrMux {
    tx: Transmitter,
    abr: PortAbr,
    back: u64,
}

impl AbrMux {
    pub fn new(p: AbrMuxParams) -> Result<AbrMux, ParamIssue> {
        let tx = Transmitter::new(p.fifo)?;
        Ok(AbrMux { tx, abr: PortAbr::new(p.algorithm), back: 0 })
    }

    /// A forward cell arriving: the buffer takes it, then the algorithm sees it (as
    /// ABR input if its VC is an ABR one, else as load taken off the line rate: the
    /// `switch` kind's ports' code, [`PortAbr::on_join`]).
    fn forward(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        if !self.abr.reads_forward() {
            self.tx.accept(cell, ctx);
            return;
        }
        let rm = forward_rm(ctx.store().payloads.get(cell.payload));
        let (now, vc) = (ctx.now, cell.vc);
        self.tx.accept(cell, ctx);
        self.abr.on_join(now, vc, rm.as_ref(), self.tx.queue_len() as u64);
    }

    /// A backward cell: ER / CI written into it if it is a backward RM cell.
    fn backward(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        self.back += 1;
        let q = self.tx.queue_len() as u64;
        let now = ctx.now;
        if let Some(Payload::Rm(rm)) = ctx.store().payloads.get_mut(cell.payload) {
            if rm.backward {
                self.abr.on_backward(now, cell.vc, rm, q);
            }
        }
        ctx.send(1, Msg::Cell(cell));
    }
}

impl Kind for AbrMux {
    fn build(p: &Params, _b: &BuildInfo) -> Result<Self, ParamIssue> {
        AbrMux::new(AbrMuxParams::bind(p)?)
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        self.tx.trace_from(ctx);
    }
    fn on_cell(&mut self, port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        if port == 0 {
            self.forward(cell, ctx)
        } else {
            self.backward(cell, ctx)
        }
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        self.tx.tick(tag, ctx);
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.tx.reset_stats(now);
        self.back = 0;
        self.abr.reset_stats();
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        self.tx.report(now, path, out);
        self.abr.report(path, out);
        out.push(path, "abr_back_cells", "count", self.back as f64, "cells");
    }
    fn ledger(&self, l: &mut Ledger) {
        self.tx.ledger(l);
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        self.tx.series_index(sub, name)
    }
    fn sample(&self, index: u64) -> f64 {
        self.tx.sample(index)
    }
}

pub const INPUTS: [PortSpec; 2] = [PortSpec::cells("in", true), PortSpec::cells("back_in", true)];
pub const OUTPUTS: [PortSpec; 2] = [PortSpec::cells("out", false), PortSpec::cells("back_out", false)];

/// The `abr_mux` kind's declarations (registered in `lib.rs`).
pub const KIND: KindInfo = KindInfo {
    kind: "abr_mux",
    help: "ABR multiplexer: a fifo (buffer at a line rate) whose switch algorithm (EFCI, EPRCA or ERICA) writes into the backward RM cells crossing it from back_in to back_out",
    source: "ATM Forum TM 4.0 section 5.10.6 (switch behaviour); 94-0735R1 (EPRCA); 96-1172 (ERICA)",
    params: &[&FIFO_PARAMS, &PARAMS, &super::port::PARAMS],
    inputs: &INPUTS,
    outputs: &OUTPUTS,
    ports: None,
    probes: &[&transmitter::PROBES, &crate::control::buffer_policy::PROBES, &super::port::PROBES, &PROBES],
    series: &[KindSeries { at: "", series: &transmitter::SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};
