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
//! Not done: the same algorithms on a `switch`'s output ports, ERICA+ queue control
//! as parameters of this kind.

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, PortId, SimDuration, SimTime};

use super::eprca::{Eprca, EprcaParams};
use super::erica::{Averaging, Erica, EricaParams};
use crate::cell::{Cell, Msg};
use crate::kind::{BuildInfo, Cx, Kind, KindInfo, PortSpec};
use crate::link::transmitter::{self, Transmitter, TransmitterParams, FIFO_PARAMS};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;
use crate::series::KindSeries;

const EPRCA_SRC: &str = "Roberts, ATM Forum 94-0735R1 (EPRCA), 1994";

pub const PARAMS: [ParamSpec; 10] = [
    ParamSpec { name: "algorithm", ty: ParamType::Choice(&["efci", "eprca", "erica"]), default: None, required: true, help: "switch algorithm: EFCI marking (needs efci_threshold), EPRCA explicit rate with intelligent marking, or ERICA", source: "issue 15; dastangoo96 (EFCI), 94-0735R1 (EPRCA), 96-1172 (ERICA)" },
    ParamSpec { name: "av", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.0625"), required: false, help: "EPRCA: averaging factor of MACR (1/16)", source: EPRCA_SRC },
    ParamSpec { name: "dpf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.875"), required: false, help: "EPRCA: down-pressure factor, fair share = DPF·MACR (7/8)", source: EPRCA_SRC },
    ParamSpec { name: "mrf", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.25"), required: false, help: "EPRCA: major reduction factor above dqt (1/4)", source: EPRCA_SRC },
    ParamSpec { name: "qt", ty: ParamType::Size, default: Some("500 cells"), required: false, help: "EPRCA: congestion threshold (queue above it: congested)", source: "atmsim convention: dastangoo96's switch threshold (500 cells); 94-0735R1 leaves it to the implementation" },
    ParamSpec { name: "dqt", ty: ParamType::Size, default: Some("2000 cells"), required: false, help: "EPRCA: heavy congestion threshold (at least qt)", source: "atmsim convention (4·qt); 94-0735R1 leaves it to the implementation" },
    ParamSpec { name: "mark_ci", ty: ParamType::Bool, default: Some("false"), required: false, help: "EPRCA: also set CI on the VCs told to slow down while congested", source: "atmsim convention (ER only, as 94-0735R1's ER switches)" },
    ParamSpec { name: "target_utilisation", ty: ParamType::Float { min: 0.0, max: 1.0 }, default: Some("0.9"), required: false, help: "ERICA: share of the line rate ABR may fill (ABR capacity = this · line rate)", source: "atmsim convention: 0.9, the value of ERICA's published simulations (96-1172; not in the seeds, to be checked)" },
    ParamSpec { name: "averaging", ty: ParamType::Time, default: Some("1 ms"), required: false, help: "ERICA: averaging interval, a time (or give averaging_cells)", source: "atmsim convention: 1 ms (about 350 OC-3c cell times; 96-1172 leaves it to the implementation)" },
    ParamSpec { name: "delta", ty: ParamType::Float { min: 0.0, max: 10.0 }, default: Some("0.1"), required: false, help: "ERICA: overload margin δ, MaxAllocPrevious used only while z ≤ 1 + δ", source: "atmsim convention: 0.1 (96-1172's example value; not in the seeds, to be checked)" },
];

pub const PROBES: [ProbeSpec; 4] = [
    ProbeSpec { name: "abr_er_cells", unit: "cells", kind: ProbeKind::Counter, help: "backward RM cells whose ER this port lowered (count)" },
    ProbeSpec { name: "abr_ci_cells", unit: "cells", kind: ProbeKind::Counter, help: "backward RM cells this port set CI on (count)" },
    ProbeSpec { name: "abr_back_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells that crossed the backward pair (count)" },
    ProbeSpec { name: "abr_fair_share", unit: "Mb/s", kind: ProbeKind::Gauge, help: "ERICA: fair share of the last interval; EPRCA: DPF·MACR (value, 424 bits per cell)" },
];

/// Which algorithm, with its parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum AlgorithmParams {
    Efci,
    Eprca(EprcaParams),
    Erica(EricaParams),
}

/// The `abr_mux` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct AbrMuxParams {
    pub fifo: TransmitterParams,
    pub algorithm: AlgorithmParams,
}

impl AbrMuxParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        let fifo = TransmitterParams::bind(p)?;
        let which = p.need_choice("algorithm", &[("efci", 0u8), ("eprca", 1), ("erica", 2)])?;
        let eprca = EprcaParams {
            av: p.need("av", Params::float)?,
            dpf: p.need("dpf", Params::float)?,
            mrf: p.need("mrf", Params::float)?,
            qt: p.need("qt", Params::cells)?,
            dqt: p.need("dqt", Params::cells)?,
            mark_ci: p.need("mark_ci", Params::bool)?,
        };
        let link_rate = fifo.line.rate(None)?.cells_per_s();
        let erica = EricaParams {
            link_rate,
            target_utilisation: p.need("target_utilisation", Params::float)?,
            averaging: Averaging::Time(p.need("averaging", Params::time)?),
            delta: p.need("delta", Params::float)?,
            queue_control: None,
        };
        let algorithm = match which {
            0 => AlgorithmParams::Efci,
            1 => AlgorithmParams::Eprca(eprca),
            _ => AlgorithmParams::Erica(erica),
        };
        Ok(AbrMuxParams { fifo, algorithm })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.fifo.validate()?;
        match &self.algorithm {
            AlgorithmParams::Efci if self.fifo.policy.efci_threshold.is_none() => Err(ParamIssue::new("algorithm", "algorithm = \"efci\" needs efci_threshold (dastangoo96: \"500 cells\")")),
            AlgorithmParams::Efci => Ok(()),
            AlgorithmParams::Eprca(e) => e.validate(),
            AlgorithmParams::Erica(e) => {
                if e.averaging == Averaging::Time(SimDuration::ZERO) {
                    return Err(ParamIssue::new("averaging", "the averaging interval must be longer than 0 s"));
                }
                e.validate()
            }
        }
    }
}

#[derive(Clone, Debug)]
enum Algorithm {
    Efci,
    Eprca(Eprca, f64),
    Erica(Erica),
}

#[derive(Clone, Debug)]
pub struct AbrMux {
    tx: Transmitter,
    algorithm: Algorithm,
    back: u64,
    /// ERICA: backward RM cells whose ER it lowered, since warm-up.
    er_lowered: u64,
}

impl AbrMux {
    pub fn new(p: AbrMuxParams) -> Result<AbrMux, ParamIssue> {
        let tx = Transmitter::new(p.fifo)?;
        let algorithm = match p.algorithm {
            AlgorithmParams::Efci => Algorithm::Efci,
            AlgorithmParams::Eprca(e) => Algorithm::Eprca(Eprca::new(e), e.dpf),
            AlgorithmParams::Erica(e) => Algorithm::Erica(Erica::new(e)),
        };
        Ok(AbrMux { tx, algorithm, back: 0, er_lowered: 0 })
    }

    /// A forward cell arriving: the algorithm sees it, then the buffer takes it.
    fn forward(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        let rm = match (&self.algorithm, ctx.store().get(cell.payload)) {
            (Algorithm::Efci, _) => None,
            (_, Some(&Payload::Rm(rm))) if !rm.backward => Some(rm),
            _ => None,
        };
        let (now, vc) = (ctx.now, cell.vc);
        self.tx.accept(cell, ctx);
        let q = self.tx.queue_len() as u64;
        match &mut self.algorithm {
            Algorithm::Efci => {}
            Algorithm::Eprca(e, _) => {
                if let Some(rm) = rm {
                    e.on_forward_rm(&rm, q);
                }
            }
            Algorithm::Erica(e) => {
                e.on_cell(now, vc, q);
                if let Some(rm) = rm {
                    e.on_forward_rm(vc, &rm);
                }
            }
        }
    }

    /// A backward cell: ER / CI written into it if it is a backward RM cell.
    fn backward(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        self.back += 1;
        let q = self.tx.queue_len() as u64;
        let now = ctx.now;
        if let Some(Payload::Rm(rm)) = ctx.store().get_mut(cell.payload) {
            if rm.backward {
                match &mut self.algorithm {
                    Algorithm::Efci => {}
                    Algorithm::Eprca(e, _) => e.on_backward_rm(rm, q),
                    Algorithm::Erica(e) => {
                        let before = rm.er;
                        e.on_backward_rm(now, cell.vc, rm, q);
                        self.er_lowered += u64::from(rm.er < before);
                    }
                }
            }
        }
        ctx.send(1, Msg::Cell(cell));
    }

    fn counts(&self) -> (u64, u64) {
        match &self.algorithm {
            Algorithm::Eprca(e, _) => (e.stats.er_lowered, e.stats.ci_set),
            _ => (self.er_lowered, 0),
        }
    }

    /// The fair share the algorithm computes now (cells/s; NaN if none).
    fn fair_share(&self) -> f64 {
        match &self.algorithm {
            Algorithm::Efci => f64::NAN,
            Algorithm::Eprca(e, dpf) => e.macr().map_or(f64::NAN, |m| m * dpf),
            Algorithm::Erica(e) => e.measure().map_or(f64::NAN, |m| m.fair_share),
        }
    }
}

impl Kind for AbrMux {
    fn build(p: &Params, _b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = AbrMuxParams::bind(p)?;
        params.validate()?;
        AbrMux::new(params)
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
        self.er_lowered = 0;
        if let Algorithm::Eprca(e, _) = &mut self.algorithm {
            e.reset_stats();
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        self.tx.report(now, path, out);
        let (er, ci) = self.counts();
        out.push(path, "abr_er_cells", "count", er as f64, "cells");
        out.push(path, "abr_ci_cells", "count", ci as f64, "cells");
        out.push(path, "abr_back_cells", "count", self.back as f64, "cells");
        out.push(path, "abr_fair_share", "value", self.fair_share() * crate::series::MB_PER_CELL, "Mb/s");
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
    params: &[&FIFO_PARAMS, &PARAMS],
    inputs: &INPUTS,
    outputs: &OUTPUTS,
    ports: None,
    probes: &[&transmitter::PROBES, &crate::control::buffer_policy::PROBES, &PROBES],
    series: &[KindSeries { at: "", series: &transmitter::SERIES }],
    is_source: false,
};
