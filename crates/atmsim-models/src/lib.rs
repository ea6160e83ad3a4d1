//! # atmsim-models
//!
//! The model library, one folder per area so that any model is one hop away:
//!
//! | area        | kinds                                   | what it models                          |
//! |-------------|-----------------------------------------|-----------------------------------------|
//! | [`traffic`] | `cbr`, `poisson`, `onoff`, `selfsimilar`, `trace`, `sink` | sources (one flow each) and the measuring sink |
//! | [`link`]    | `fifo`, `link`, `loss`                  | the transmitter (buffer + line rate, physical-layer presets, propagation), random loss |
//! | [`switch`]  | `switch`                                | N-port output-buffered switch, VC translation |
//! | [`aal`]     | (parts)                                 | AAL5 segmentation and reassembly         |
//! | [`host`]    | `host`                                  | workstation: IP over AAL5, ping/UDP, TCP Reno, CPU, NIC |
//! | [`control`] | `pacer`, `gcra`, `iofm` (+ buffer policies) | pacing, UPC, i-out-of-m rate control, EPD/PPD/EFCI |
//! | [`hold`]    | `hold`                                  | kernel benchmark workload                |
//!
//! [`KINDS`] is the registry the scenario loader and `atmsim describe` read. [`Model`]
//! is the closed enum the kernel dispatches on (static dispatch, one `match` per event).

pub mod aal;
pub mod cell;
pub mod control;
pub mod hold;
pub mod host;
pub mod link;
pub mod params;
pub mod series;
pub mod suggest;
pub mod switch;
pub mod traffic;

use control::{buffer_policy, gcra, iofm, pacer};
use link::{loss, transmitter};
use traffic::sink;

use atmsim_kernel::probe::{ProbeSpec, Report};
use atmsim_kernel::{rng, Component, Ctx, Ledger, PortId, SimTime};

pub use cell::{Cell, Msg};
use traffic::Source;
use series::KindSeries;
use params::{ParamIssue, ParamSpec, Params};

/// An input port declaration; `multi` inputs accept any number of connections.
#[derive(Clone, Copy, Debug)]
pub struct PortSpec {
    pub name: &'static str,
    pub multi: bool,
}

/// The ports of one component instance (kinds with a `ports` function decide them
/// from their parameters, e.g. a switch's port count).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Ports {
    pub inputs: Vec<PortDecl>,
    pub outputs: Vec<PortDecl>,
}

/// One port of one instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortDecl {
    pub name: String,
    /// An input that accepts any number of connections.
    pub multi: bool,
    /// Must be connected (unconnected optional ports are simply unused).
    pub required: bool,
}

impl PortDecl {
    pub fn new(name: impl Into<String>, multi: bool, required: bool) -> Self {
        PortDecl { name: name.into(), multi, required }
    }
}

/// What a constructor needs besides parameters.
#[derive(Clone, Debug)]
pub struct BuildInfo<'a> {
    /// The component's path (its name in the scenario).
    pub path: &'a str,
    pub seed: u64,
    pub run: u64,
    /// Flow number, for sources (assigned in scenario order).
    pub flow: u32,
    /// The scenario file's directory: relative file names in parameters are resolved
    /// against it.
    pub dir: &'a std::path::Path,
}

impl BuildInfo<'_> {
    /// The random stream for one purpose of this component.
    pub fn stream(&self, purpose: &str) -> atmsim_kernel::Stream {
        rng::stream(self.seed, self.run, self.path, purpose)
    }
}

/// A component kind: its declarations and its constructor.
pub struct KindSpec {
    pub kind: &'static str,
    pub help: &'static str,
    pub source: &'static str,
    pub params: &'static [&'static [ParamSpec]],
    /// Input ports (for kinds with `ports`, a description such as `p<N>`).
    pub inputs: &'static [PortSpec],
    pub outputs: &'static [&'static str],
    /// Per-instance ports, for kinds whose ports depend on parameters.
    pub ports: Option<fn(&Params) -> Ports>,
    pub probes: &'static [&'static [ProbeSpec]],
    /// Quantities an instance can sample as time series, by sub-path.
    pub series: &'static [KindSeries],
    /// Sources originate flows (they get a flow number and appear in the ledger).
    pub is_source: bool,
    pub build: fn(&Params, &BuildInfo) -> Result<Model, ParamIssue>,
}

impl std::fmt::Debug for KindSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KindSpec({})", self.kind)
    }
}

impl KindSpec {
    pub fn params(&self) -> impl Iterator<Item = &'static ParamSpec> {
        self.params.iter().flat_map(|g| g.iter())
    }
    pub fn probes(&self) -> impl Iterator<Item = &'static ProbeSpec> {
        self.probes.iter().flat_map(|g| g.iter())
    }
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params().find(|p| p.name == name)
    }
    /// The ports of an instance with these parameters.
    pub fn ports_for(&self, p: &Params) -> Ports {
        match self.ports {
            Some(f) => f(p),
            None => Ports {
                inputs: self.inputs.iter().map(|i| PortDecl::new(i.name, i.multi, true)).collect(),
                outputs: self.outputs.iter().map(|o| PortDecl::new(*o, false, true)).collect(),
            },
        }
    }
}

const IN_ONE: [PortSpec; 1] = [PortSpec { name: "in", multi: false }];
const IN_MANY: [PortSpec; 1] = [PortSpec { name: "in", multi: true }];
const OUT: [&str; 1] = ["out"];

/// Every component kind atmsim knows.
pub static KINDS: [KindSpec; 15] = [
    KindSpec {
        kind: "cbr",
        help: "constant-bit-rate cell source (fixed or random phase)",
        source: "ITU-T I.371 CBR; N·D/D/1 random phases (Roberts & Virtamo 1991)",
        params: &[&traffic::cbr::PARAMS, &traffic::COMMON_PARAMS],
        inputs: &[],
        outputs: &OUT,
        ports: None,
        probes: &[&traffic::SOURCE_PROBES],
        series: &[KindSeries { at: "", series: &traffic::SOURCE_SERIES }],
        is_source: true,
        build: |p, b| Ok(Model::Cbr(traffic::cbr::Cbr::new(p, b.flow, b.stream("phase"))?)),
    },
    KindSpec {
        kind: "poisson",
        help: "Poisson cell source",
        source: "classic M/·/· arrivals",
        params: &[&traffic::poisson::PARAMS, &traffic::COMMON_PARAMS],
        inputs: &[],
        outputs: &OUT,
        ports: None,
        probes: &[&traffic::SOURCE_PROBES],
        series: &[KindSeries { at: "", series: &traffic::SOURCE_SERIES }],
        is_source: true,
        build: |p, b| Ok(Model::Poisson(traffic::poisson::Poisson::new(p, b.flow, b.stream("arrivals"))?)),
    },
    KindSpec {
        kind: "onoff",
        help: "two-state Markov on-off source ⟨peak, mean, burst factor⟩ with Poisson cells while active",
        source: "buddhikot92 section 5, Figure 8",
        params: &[&traffic::onoff::PARAMS, &traffic::COMMON_PARAMS],
        inputs: &[],
        outputs: &OUT,
        ports: None,
        probes: &[&traffic::SOURCE_PROBES, &traffic::onoff::PROBES],
        series: &[KindSeries { at: "", series: &traffic::SOURCE_SERIES }],
        is_source: true,
        build: |p, b| Ok(Model::OnOff(traffic::onoff::OnOff::new(p, b.flow, b.stream("onoff"))?)),
    },
    KindSpec {
        kind: "selfsimilar",
        help: "self-similar source: the cell rate per time bin is fractional Gaussian noise with Hurst parameter H (exact paths by Davies–Harte), clipped to [0, peak]",
        source: "Norros 1995 (fBm model); Leland et al. 1993; dastangoo96 (H = 0.75); Davies & Harte 1987",
        params: &[&traffic::selfsimilar::PARAMS, &traffic::COMMON_PARAMS],
        inputs: &[],
        outputs: &OUT,
        ports: None,
        probes: &[&traffic::SOURCE_PROBES],
        series: &[KindSeries { at: "", series: &traffic::SOURCE_SERIES }],
        is_source: true,
        build: |p, b| Ok(Model::SelfSimilar(Box::new(traffic::selfsimilar::SelfSimilar::new(p, b.flow, b.stream("fgn"))?))),
    },
    KindSpec {
        kind: "trace",
        help: "trace-driven source: a packet trace (time, length) or a frame-size trace replayed as AAL5 PDUs, cells at a peak rate or spread over each frame",
        source: "SPEC section 3; Bellcore Ethernet traces (Leland & Wilson 1989), MPEG-1 Star Wars (Garrett & Willinger 1994)",
        params: &[&traffic::trace::PARAMS, &traffic::COMMON_PARAMS],
        inputs: &[],
        outputs: &OUT,
        ports: None,
        probes: &[&traffic::SOURCE_PROBES, &traffic::trace::PROBES],
        series: &[KindSeries { at: "", series: &traffic::SOURCE_SERIES }],
        is_source: true,
        build: |p, b| Ok(Model::Trace(Box::new(traffic::trace::TraceSource::new(p, b.flow, b.dir)?))),
    },
    KindSpec {
        kind: "fifo",
        help: "cell multiplexer: FIFO buffer (finite with tail drop, or unlimited) served at a line rate",
        source: "output-buffered ATM multiplexer",
        params: &[&transmitter::FIFO_PARAMS],
        inputs: &IN_MANY,
        outputs: &OUT,
        ports: None,
        probes: &[&transmitter::PROBES, &buffer_policy::PROBES],
        series: &[KindSeries { at: "", series: &transmitter::SERIES }],
        is_source: false,
        build: |p, _| Ok(Model::Transmitter(transmitter::Transmitter::new(p)?)),
    },
    KindSpec {
        kind: "link",
        help: "physical link: transmitter at the line rate, then propagation delay (delay, or length at 5 µs/km)",
        source: "SONET/DS-3/TAXI presets (ITU-T I.432, ATM Forum UNI 3.1)",
        params: &[&transmitter::LINK_PARAMS],
        inputs: &IN_ONE,
        outputs: &OUT,
        ports: None,
        probes: &[&transmitter::PROBES, &buffer_policy::PROBES],
        series: &[KindSeries { at: "", series: &transmitter::SERIES }],
        is_source: false,
        build: |p, _| Ok(Model::Transmitter(transmitter::Transmitter::new(p)?)),
    },
    KindSpec {
        kind: "switch",
        help: "N-port output-buffered ATM switch: VPI/VCI translation, point-to-multipoint, per-port FIFO or per-VC round-robin queues, per-port per-VC counters",
        source: "domingo95 section 2 (SynOptics LattisCell); lazarou96 Table 1",
        params: &[&switch::PARAMS],
        inputs: &[PortSpec { name: "p<N>", multi: false }],
        outputs: &["p<N>"],
        ports: Some(switch::ports),
        probes: &[&switch::PROBES, &transmitter::PROBES, &buffer_policy::PROBES],
        series: &[KindSeries { at: "p<N>", series: &transmitter::SERIES }],
        is_source: false,
        build: |p, _| Ok(Model::Switch(Box::new(switch::Switch::new(p)?))),
    },
    KindSpec {
        kind: "host",
        help: "workstation: IPv4 over AAL5 (LLC/SNAP, MTU, fragmentation) on an ATM interface; ping, echo replies, UDP blaster; TCP Reno (4.3BSD timers) ttcp senders/receivers on a CPU with per-segment overhead; per-VC adapter pacers",
        source: "RFC 1577/1483/791; domingo95 section 3 (ping, ttcp -u); lazarou96 Table 1 (TCP, host CPU)",
        params: &[&host::PARAMS, &host::conn::PARAMS],
        inputs: &IN_ONE,
        outputs: &OUT,
        ports: Some(|_| Ports { inputs: vec![PortDecl::new("in", false, false)], outputs: vec![PortDecl::new("out", false, true)] }),
        probes: &[&host::PROBES, &host::conn::PROBES, &transmitter::PROBES],
        series: &[KindSeries { at: "", series: &host::SERIES }, KindSeries { at: "nic", series: &transmitter::SERIES }, KindSeries { at: "tcp/vc<N>", series: &host::conn::SERIES }],
        is_source: true,
        build: |p, b| Ok(Model::Host(Box::new(host::Host::new(p, b.flow, b.stream("app"), b.stream("tcp_timers"))?))),
    },
    KindSpec {
        kind: "loss",
        help: "independent random cell loss with probability p",
        source: "baseline of domingo95's correlated-loss argument",
        params: &[&loss::PARAMS],
        inputs: &IN_ONE,
        outputs: &OUT,
        ports: None,
        probes: &[&loss::PROBES],
        series: &[],
        is_source: false,
        build: |p, b| Ok(Model::Loss(loss::Loss::new(p, b.stream("loss"))?)),
    },
    KindSpec {
        kind: "pacer",
        help: "cell-level pacer: an unlimited FIFO per paced VC served at the pacing rate; other VCs pass through",
        source: "lazarou96 section 4.4 (FIFO + server at the pacing rate); evans96 (per-VC pacing)",
        params: &[&pacer::PARAMS],
        inputs: &IN_MANY,
        outputs: &OUT,
        ports: None,
        probes: &[&pacer::PROBES],
        series: &[KindSeries { at: "", series: &pacer::SERIES }, KindSeries { at: "vc<N>", series: &pacer::SERIES }],
        is_source: false,
        build: |p, _| Ok(Model::Pacer(pacer::PacerNode::new(p)?)),
    },
    KindSpec {
        kind: "gcra",
        help: "usage parameter control: GCRA(T, τ) in virtual-scheduling or leaky-bucket form; non-conforming cells dropped, tagged (CLP = 1) or counted",
        source: "ITU-T I.371 section 4.4.3 and Annex A",
        params: &[&gcra::PARAMS],
        inputs: &IN_MANY,
        outputs: &OUT,
        ports: None,
        probes: &[&gcra::PROBES],
        series: &[KindSeries { at: "", series: &gcra::SERIES }],
        is_source: false,
        build: |p, _| Ok(Model::Gcra(gcra::Upc::new(p)?)),
    },
    KindSpec {
        kind: "iofm",
        help: "per-VC i-out-of-m rate control: at most i cells of a VC in any m consecutive slots of the output line (a token comes back m slots after use); unpaced VCs share the line; optionally evans96's adaptive shaper",
        source: "evans96 (the gateway's i/m controller: i ≤ 511, m ≤ 1023; the adaptive i-out-of-m shaper, Fig. 16)",
        params: &[&iofm::PARAMS],
        inputs: &IN_MANY,
        outputs: &OUT,
        ports: None,
        probes: &[&iofm::PROBES],
        series: &[KindSeries { at: "", series: &iofm::SERIES }, KindSeries { at: "vc<N>", series: &iofm::SERIES }],
        is_source: false,
        build: |p, _| Ok(Model::Iofm(Box::new(iofm::Iofm::new(p)?))),
    },
    KindSpec {
        kind: "sink",
        help: "cell sink: per-VC delay, throughput",
        source: "atmsim",
        params: &[],
        inputs: &IN_MANY,
        outputs: &[],
        ports: None,
        probes: &[&sink::PROBES],
        series: &[KindSeries { at: "", series: &sink::SERIES }, KindSeries { at: "vc<N>", series: &sink::SERIES }],
        is_source: false,
        build: |_, _| Ok(Model::Sink(sink::Sink::new())),
    },
    KindSpec {
        kind: "hold",
        help: "hold-model benchmark workload: keeps N exponential timers pending",
        source: "Vaucher & Duval 1975 hold model",
        params: &[&hold::PARAMS],
        inputs: &[],
        outputs: &[],
        ports: None,
        probes: &[&hold::PROBES],
        series: &[KindSeries { at: "", series: &hold::SERIES }],
        is_source: false,
        build: |p, b| Ok(Model::Hold(hold::Hold::new(p, b.stream("hold"))?)),
    },
];

/// Looks a kind up by name.
pub fn kind(name: &str) -> Option<&'static KindSpec> {
    KINDS.iter().find(|k| k.kind == name)
}

/// Every component, as one closed enum.
#[derive(Clone, Debug)]
pub enum Model {
    Cbr(traffic::cbr::Cbr),
    Poisson(traffic::poisson::Poisson),
    OnOff(traffic::onoff::OnOff),
    Trace(Box<traffic::trace::TraceSource>),
    SelfSimilar(Box<traffic::selfsimilar::SelfSimilar>),
    Transmitter(transmitter::Transmitter),
    Sink(sink::Sink),
    Hold(hold::Hold),
    Switch(Box<switch::Switch>),
    Host(Box<host::Host>),
    Loss(loss::Loss),
    Pacer(pacer::PacerNode),
    Gcra(gcra::Upc),
    Iofm(Box<iofm::Iofm>),
}

impl Model {
    /// The index of series `name` at sub-path `sub` of this instance (see [`series`]).
    pub fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        use series::{code, find, parse_vc_name};
        let vc = |sub: &str| if sub.is_empty() { Some(0) } else { parse_vc_name(sub).map(|l| l as u64 + 1) };
        match self {
            Model::Cbr(_) | Model::Poisson(_) | Model::OnOff(_) | Model::Trace(_) | Model::SelfSimilar(_) if sub.is_empty() => find(&traffic::SOURCE_SERIES, name),
            Model::Transmitter(_) if sub.is_empty() => find(&transmitter::SERIES, name),
            Model::Hold(_) if sub.is_empty() => find(&hold::SERIES, name),
            Model::Gcra(_) if sub.is_empty() => find(&gcra::SERIES, name),
            Model::Sink(_) => Some(code(vc(sub)?, find(&sink::SERIES, name)?)),
            Model::Pacer(p) => {
                let element = if sub.is_empty() { 0 } else { p.queue_of(parse_vc_name(sub)?)? as u64 + 1 };
                Some(code(element, find(&pacer::SERIES, name)?))
            }
            Model::Switch(s) => s.series_index(sub, name),
            Model::Iofm(m) => m.series_index(sub, name),
            Model::Host(h) => h.series_index(sub, name),
            _ => None,
        }
    }

    /// The flow and VC label of a source.
    pub fn source_flow(&self) -> Option<(u32, u32)> {
        let c = match self {
            Model::Cbr(s) => s.core(),
            Model::Poisson(s) => s.core(),
            Model::OnOff(s) => s.core(),
            Model::Trace(s) => s.core(),
            Model::SelfSimilar(s) => s.core(),
            Model::Host(h) => return Some((h.flow(), h.vc())),
            _ => return None,
        };
        Some((c.flow, c.vc))
    }
}

impl Component for Model {
    type Msg = Msg;

    fn start(&mut self, ctx: &mut Ctx<'_, Msg>) {
        match self {
            Model::Cbr(m) => m.start(ctx),
            Model::Poisson(m) => m.start(ctx),
            Model::OnOff(m) => m.start(ctx),
            Model::Trace(m) => m.start(ctx),
            Model::SelfSimilar(m) => m.start(ctx),
            Model::Hold(m) => m.start(ctx),
            Model::Host(m) => m.start(ctx),
            Model::Iofm(m) => m.start(ctx),
            Model::Transmitter(_) | Model::Sink(_) | Model::Switch(_) | Model::Loss(_) | Model::Pacer(_) | Model::Gcra(_) => {}
        }
    }

    #[inline(always)]
    fn on_timer(&mut self, tag: u32, ctx: &mut Ctx<'_, Msg>) {
        match self {
            Model::Transmitter(m) => m.on_timer(tag, ctx),
            Model::Poisson(m) => m.on_timer(ctx),
            Model::Cbr(m) => m.on_timer(ctx),
            Model::OnOff(m) => m.on_timer(tag, ctx),
            Model::Trace(m) => m.on_timer(ctx),
            Model::SelfSimilar(m) => m.on_timer(ctx),
            Model::Hold(m) => m.on_timer(ctx),
            Model::Switch(m) => m.on_timer(tag, ctx),
            Model::Host(m) => m.on_timer(tag, ctx),
            Model::Pacer(m) => m.on_timer(tag, ctx),
            Model::Iofm(m) => m.on_timer(tag, ctx),
            Model::Sink(_) | Model::Loss(_) | Model::Gcra(_) => ctx.fail(format!("unexpected timer {tag}")),
        }
    }

    #[inline(always)]
    fn on_message(&mut self, port: PortId, msg: Msg, ctx: &mut Ctx<'_, Msg>) {
        let Msg::Cell(cell) = msg;
        match self {
            Model::Transmitter(m) => m.on_cell(cell, ctx),
            Model::Sink(m) => m.on_cell(cell, ctx.now),
            Model::Switch(m) => m.on_cell(port, cell, ctx),
            Model::Host(m) => m.on_cell(cell, ctx),
            Model::Loss(m) => m.on_cell(cell, ctx),
            Model::Pacer(m) => m.on_cell(cell, ctx),
            Model::Gcra(m) => m.on_cell(cell, ctx),
            Model::Iofm(m) => m.on_cell(cell, ctx),
            _ => ctx.fail("a source or workload received a cell".into()),
        }
    }

    fn reset_stats(&mut self, now: SimTime) {
        match self {
            Model::Cbr(m) => m.reset_stats(now),
            Model::Poisson(m) => m.reset_stats(now),
            Model::OnOff(m) => m.reset_stats(now),
            Model::Trace(m) => m.reset_stats(now),
            Model::SelfSimilar(m) => m.reset_stats(now),
            Model::Transmitter(m) => m.reset_stats(now),
            Model::Sink(m) => m.reset_stats(now),
            Model::Hold(m) => m.reset_stats(now),
            Model::Switch(m) => m.reset_stats(now),
            Model::Host(m) => m.reset_stats(now),
            Model::Loss(m) => m.reset_stats(now),
            Model::Pacer(m) => m.reset_stats(now),
            Model::Gcra(m) => m.reset_stats(now),
            Model::Iofm(m) => m.reset_stats(now),
        }
    }

    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        match self {
            Model::Cbr(m) => m.report(now, path, out),
            Model::Poisson(m) => m.report(now, path, out),
            Model::OnOff(m) => m.report(now, path, out),
            Model::Trace(m) => m.report(now, path, out),
            Model::SelfSimilar(m) => m.report(now, path, out),
            Model::Transmitter(m) => m.report(now, path, out),
            Model::Sink(m) => m.report(now, path, out),
            Model::Hold(m) => m.report(now, path, out),
            Model::Switch(m) => m.report(now, path, out),
            Model::Host(m) => m.report(now, path, out),
            Model::Loss(m) => m.report(now, path, out),
            Model::Pacer(m) => m.report(now, path, out),
            Model::Gcra(m) => m.report(now, path, out),
            Model::Iofm(m) => m.report(now, path, out),
        }
    }

    fn sample(&self, index: u64, _now: SimTime) -> f64 {
        let (element, q) = series::split(index);
        match self {
            Model::Cbr(m) => m.core().sample(q),
            Model::Poisson(m) => m.core().sample(q),
            Model::OnOff(m) => m.core().sample(q),
            Model::Trace(m) => m.core().sample(q),
            Model::SelfSimilar(m) => m.core().sample(q),
            Model::Transmitter(m) => m.sample(q),
            Model::Hold(m) => m.sample(),
            Model::Sink(m) => m.sample(element.checked_sub(1).map(|l| l as u32)),
            Model::Pacer(m) => m.sample(element.checked_sub(1).map(|e| e as usize), q),
            Model::Switch(m) => m.sample(index),
            Model::Host(m) => m.sample(index),
            Model::Gcra(m) => m.sample(q),
            Model::Iofm(m) => m.sample(index),
            Model::Loss(_) => f64::NAN,
        }
    }

    fn ledger(&self, l: &mut Ledger) {
        match self {
            Model::Cbr(m) => m.ledger(l),
            Model::Poisson(m) => m.ledger(l),
            Model::OnOff(m) => m.ledger(l),
            Model::Trace(m) => m.ledger(l),
            Model::SelfSimilar(m) => m.ledger(l),
            Model::Transmitter(m) => m.ledger(l),
            Model::Sink(m) => m.ledger(l),
            Model::Switch(m) => m.ledger(l),
            Model::Host(m) => m.ledger(l),
            Model::Loss(m) => m.ledger(l),
            Model::Pacer(m) => m.ledger(l),
            Model::Gcra(m) => m.ledger(l),
            Model::Iofm(m) => m.ledger(l),
            Model::Hold(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_declares_distinct_params_and_valid_defaults() {
        for k in &KINDS {
            let mut names: Vec<_> = k.params().map(|p| p.name).collect();
            let n = names.len();
            names.sort();
            names.dedup();
            assert_eq!(n, names.len(), "duplicate parameter in {}", k.kind);
            for p in k.params() {
                if let Some(d) = p.default {
                    let raw = params::default_raw(d);
                    params::parse_value(p, &raw).unwrap_or_else(|e| panic!("{}.{} default: {e}", k.kind, p.name));
                }
            }
        }
    }
}
