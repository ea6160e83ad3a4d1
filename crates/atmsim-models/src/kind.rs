//! What every model kind declares and implements: its declarations ([`KindInfo`]:
//! parameters, ports, probes, series) and its behaviour (the [`Kind`] trait: one set of
//! method signatures for all models). The registry, the closed [`crate::Model`] enum
//! and every dispatch `match` are generated from the one list in `lib.rs`
//! ([`crate::models!`]); see docs/architecture.md, "Adding a kind".

use atmsim_kernel::probe::{ProbeSpec, Report};
use atmsim_kernel::{rng, Ledger, PortId, SimTime};

use crate::cell::{Carries, Cell, Frame};
use crate::params::{ParamIssue, ParamSpec, Params};
use crate::series::KindSeries;

/// The context every model's handlers get (defined with the run's store).
pub use crate::observe::Cx;

/// A model kind's behaviour. The kernel's `Component` is implemented once, for the
/// generated [`crate::Model`] enum, by delegating to this trait.
pub trait Kind: Sized {
    /// Builds an instance from validated parameters (also run once at load time, so a
    /// consistency error here is reported with file, line and key).
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue>;
    /// Called once at time zero, in component order.
    fn start(&mut self, ctx: &mut Cx<'_>) {
        let _ = ctx;
    }
    /// A timer this instance scheduled has fired.
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        ctx.fail(format!("unexpected timer {tag}"));
    }
    /// A cell arrived on input port `port`.
    fn on_cell(&mut self, port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let _ = (port, cell);
        ctx.fail("this kind has no cell inputs".into());
    }
    /// A frame arrived on input port `port`.
    fn on_frame(&mut self, port: PortId, frame: Frame, ctx: &mut Cx<'_>) {
        let _ = (port, frame);
        ctx.fail("this kind has no frame inputs".into());
    }
    /// Warm-up deletion: forget statistics gathered before `now`.
    fn reset_stats(&mut self, now: SimTime);
    /// Writes this instance's probe rows; `path` is its name.
    fn report(&self, now: SimTime, path: &str, out: &mut Report);
    /// Adds this instance's cells to the conservation ledger.
    fn ledger(&self, l: &mut Ledger);
    /// The index of series `name` at sub-path `sub` (see [`crate::series`]).
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let _ = (sub, name);
        None
    }
    /// The current value of series `index` (one this instance handed out).
    fn sample(&self, index: u64) -> f64 {
        let _ = index;
        f64::NAN
    }
    /// A source's flow and VC label.
    fn source_flow(&self) -> Option<(u32, u32)> {
        None
    }
    /// Whether this kind only records what it receives (never schedules, never sends):
    /// the kernel may then hand it timed deliveries without an event each (see
    /// `atmsim_kernel::Component::passive`).
    fn passive(&self) -> bool {
        false
    }
    /// Brings state computed ahead of time up to date with every instant before
    /// `before` (see `atmsim_kernel::Component::settle`).
    fn settle(&mut self, before: SimTime) {
        let _ = before;
    }
}

/// A port declaration: its name, what it carries (cells or frames) and, for an
/// input, whether it accepts any number of connections (`multi`).
#[derive(Clone, Copy, Debug)]
pub struct PortSpec {
    pub name: &'static str,
    pub multi: bool,
    pub carries: Carries,
}

impl PortSpec {
    /// A cell port.
    pub const fn cells(name: &'static str, multi: bool) -> PortSpec {
        PortSpec { name, multi, carries: Carries::Cells }
    }
    /// A frame port.
    pub const fn frames(name: &'static str, multi: bool) -> PortSpec {
        PortSpec { name, multi, carries: Carries::Frames }
    }
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
    /// What it carries (wiring cells to frames is a load-time error).
    pub carries: Carries,
}

impl PortDecl {
    /// The same port carrying `c`.
    pub fn carrying(mut self, c: Carries) -> Self {
        self.carries = c;
        self
    }
    pub fn new(name: impl Into<String>, multi: bool, required: bool) -> Self {
        PortDecl { name: name.into(), multi, required, carries: Carries::Cells }
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
    /// The run's end (its duration): how much a source has to prepare for.
    pub end: SimTime,
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

/// A component kind's declarations: what the scenario loader checks and `atmsim
/// describe` prints. Each model module writes one `KindInfo` constant per kind it
/// implements; [`crate::KINDS`] pairs it with the constructor.
#[derive(Clone, Copy)]
pub struct KindInfo {
    pub kind: &'static str,
    pub help: &'static str,
    pub source: &'static str,
    pub params: &'static [&'static [ParamSpec]],
    /// Input ports (for kinds with `ports`, a description such as `p<N>`).
    pub inputs: &'static [PortSpec],
    pub outputs: &'static [PortSpec],
    /// Per-instance ports, for kinds whose ports depend on parameters.
    pub ports: Option<fn(&Params) -> Ports>,
    pub probes: &'static [&'static [ProbeSpec]],
    /// Quantities an instance can sample as time series, by sub-path.
    pub series: &'static [KindSeries],
    /// Sources originate flows (they get a flow number and appear in the ledger).
    pub is_source: bool,
    /// Every cell it takes in leaves on one of its outputs or is dropped: it makes
    /// none and consumes none (a buffer, a link, a switch, a shaper). A loop of such
    /// components with no way out to any other kind is refused at load: cells that
    /// enter it would circulate until the run ends (issue 44 item 9).
    pub forwards_only: bool,
    /// What the load-time check of offered load against line rate reads (issue 44 item 9).
    pub rates: Rates,
    /// What the run's observers ask of an instance.
    pub observed: Observed,
}

/// What the run's observers ([`crate::observers`]) ask of a kind's instances, so that
/// the scenario builder names no kind.
#[derive(Clone, Copy)]
pub struct Observed {
    /// The packet capture an instance with these parameters asks for in replication
    /// `run`: its file and snap length ([`crate::observers::capture`]); None for none.
    pub capture: Option<fn(&Params, u64) -> Result<Option<(String, usize)>, ParamIssue>>,
    /// How many stations an instance holds inside it, which a trace filter names
    /// `NAME/sI` (the FDDI ring's).
    pub stations: Option<fn(&Params) -> i64>,
}

impl Observed {
    /// Nothing to ask.
    pub const NONE: Observed = Observed { capture: None, stations: None };
}

/// A rate a kind's parameters give, in bits per second of whole 53-octet cells (424
/// bits each); None when the parameters do not give one (a trace file, say).
pub type RateOf = fn(&Params) -> Option<f64>;

/// The rates a kind declares for the load-time check that no buffer is offered more
/// than its line rate can carry: an offered load above it is almost always a unit typed
/// wrong (`MB/s` for `Mb/s`, eight times the rate), and the queue grows without bound.
#[derive(Clone, Copy)]
pub struct Rates {
    /// A source: the mean cell rate it sends while active.
    pub offered: Option<RateOf>,
    /// A transmitter: the rate at which it serves the cells of all its inputs.
    pub line: Option<RateOf>,
    /// It hands each cell on when it arrives, on its one output, neither shaping nor
    /// policing (a loss model, a meter): the check looks through it to what follows.
    pub passes: bool,
}

impl Rates {
    /// None of these: the kind takes no part in the check (and ends a search for the
    /// transmitter a source feeds).
    pub const NONE: Rates = Rates { offered: None, line: None, passes: false };
    /// A kind the check looks through.
    pub const PASSES: Rates = Rates { offered: None, line: None, passes: true };
}

/// A registered kind: its declarations and its constructor (generated by
/// [`crate::models!`] from the one list in `lib.rs`).
pub struct KindSpec {
    pub info: KindInfo,
    pub build: fn(&Params, &BuildInfo) -> Result<crate::Model, ParamIssue>,
}

impl std::ops::Deref for KindSpec {
    type Target = KindInfo;
    fn deref(&self) -> &KindInfo {
        &self.info
    }
}

impl std::fmt::Debug for KindSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KindSpec({})", self.kind)
    }
}

impl KindInfo {
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
                inputs: self.inputs.iter().map(|i| PortDecl::new(i.name, i.multi, true).carrying(i.carries)).collect(),
                outputs: self.outputs.iter().map(|o| PortDecl::new(o.name, false, true).carrying(o.carries)).collect(),
            },
        }
    }
}

/// One input that accepts one connection / any number of them; one output.
pub const IN_ONE: [PortSpec; 1] = [PortSpec::cells("in", false)];
pub const IN_MANY: [PortSpec; 1] = [PortSpec::cells("in", true)];
pub const OUT: [PortSpec; 1] = [PortSpec::cells("out", false)];
