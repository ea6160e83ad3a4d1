//! What a switch is built from: its parameters bound and checked, and the plan worked
//! out from them (line rates, routes, queues' sizes and levels, ABR and credit ports).

use atmsim_kernel::{Rate, SimDuration};

use super::credit;
use super::fabric::{Arbitration, MAX_BRANCHES};
use super::table::{parse_endpoint, parse_port_abr, parse_port_length, parse_port_rate, parse_port_setting, parse_table, VcEntry};
use crate::cell::vc_name;
use crate::control::abr::port::{AlgorithmParams, PortAbrParams};
use crate::control::buffer_policy::{BufferPolicy, BufferPolicyParams};
use crate::link::sonet::SonetGrid;
use crate::link::transmitter::LineRateParams;
use crate::params::{fibre_delay, CellLimit, ParamIssue, Params};

/// How an output port queues cells.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queueing {
    Fifo,
    PerVc,
}

/// The `switch` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct SwitchParams {
    pub ports: usize,
    /// Line rate of every output port (OC-3c if neither phy nor rate is given).
    pub line: LineRateParams,
    pub capacity: CellLimit,
    pub queueing: Queueing,
    pub vc_capacity: CellLimit,
    /// "pOUT:VPI/VCI = LEVEL" entries (None: every VC at level 0).
    pub priority: Option<Vec<String>>,
    /// "pOUT:VPI/VCI = W" entries (None: every VC one cell per turn).
    pub weight: Option<Vec<String>>,
    /// Processing delay.
    pub delay: SimDuration,
    /// "pN = PRESET or RATE" entries (None: every port at `line`).
    pub port_phy: Option<Vec<String>>,
    /// Fibre length after every output port, metres.
    pub line_length: f64,
    /// "pN = LENGTH" entries (None: every port at `line_length`).
    pub port_length: Option<Vec<String>>,
    /// "pN = sonet" entries (None: no port framed).
    pub port_framing: Option<Vec<String>>,
    /// "pN = efci | eprca | erica" entries (None: no ABR algorithm on any port).
    pub abr: Option<Vec<String>>,
    /// The ABR algorithms' settings (used by the ports `abr` names).
    pub abr_settings: PortAbrParams,
    /// The translation table's entries.
    pub vcs: Vec<String>,
    pub policy: BufferPolicyParams,
    /// Receiving buffers and fabric (None: output-buffered).
    pub input: Option<InputParams>,
    pub shared_capacity: CellLimit,
    /// Hop-by-hop credit flow control on particular ports ([`credit`]).
    pub credit: credit::CreditParams,
}

/// The receiving buffers and fabric of `buffering = "input-output"`.
#[derive(Clone, Debug, PartialEq)]
pub struct InputParams {
    /// Cells per receiving buffer.
    pub capacity: CellLimit,
    /// Fabric rate / fastest port line rate (1 or more).
    pub speedup: f64,
    pub arbitration: Arbitration,
    /// Fabric slots between two cells of one VC (1: no restriction; AN2: 2).
    pub vc_slot_gap: u64,
}

/// What [`SwitchParams::plan`] works out: everything a switch is built from.
pub(super) struct Plan {
    pub(super) rates: Vec<Rate>,
    /// Per output port: the propagation delay of the line it transmits on.
    pub(super) propagation: Vec<SimDuration>,
    /// Per output port: its SONET grid, if framed.
    pub(super) framing: Vec<Option<SonetGrid>>,
    pub(super) capacity: Option<usize>,
    pub(super) vc_capacity: Option<usize>,
    /// Output-side VC labels per port, in table order (`Cell::aux` indexes them).
    pub(super) out_labels: Vec<Vec<u32>>,
    /// Per output port: the priority level of each of its VCs (empty: all level 0).
    pub(super) levels: Vec<Vec<u8>>,
    /// Per output port: the cells per turn of each of its VCs (empty: all 1).
    pub(super) weights: Vec<Vec<u16>>,
    pub(super) routes: Vec<Vec<(u16, u32, u16)>>,
    pub(super) route_labels: Vec<(u16, u32)>,
    pub(super) policy: Option<BufferPolicy>,
    /// Per output port: its ABR algorithm, if any.
    pub(super) abr: Vec<Option<AlgorithmParams>>,
    /// Per route: the output port whose forward VC a backward RM cell arriving on this
    /// route belongs to (see [`Switch`]), or [`NO_PORT`].
    pub(super) abr_back: Vec<u16>,
    /// Receiving buffer size (None: unlimited) and fabric rate, with input buffering.
    pub(super) input: Option<(Option<usize>, Rate, Arbitration, u64)>,
    pub(super) shared: Option<usize>,
    /// Credit flow control (None: no port takes part).
    pub(super) credit: Option<credit::CreditPlan>,
}

/// The lowest priority level a VC may have (`priority`).
pub(super) const MAX_LEVEL: u8 = 7;

/// The most cells a VC may send per turn of its round robin (`weight`).
pub(super) const MAX_WEIGHT: u16 = 4096;

/// No port: a route whose cells are no ABR port's backward RM cells.
pub(super) const NO_PORT: u16 = u16::MAX;

/// The line rate of output ports when neither phy nor rate is given.
pub const DEFAULT_PHY: &str = "OC-3c";

impl SwitchParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(SwitchParams {
            ports: p.need("ports", Params::int)? as usize,
            line: LineRateParams::bind(p)?,
            capacity: p.need("capacity", Params::cell_limit)?,
            queueing: p.need_choice("queueing", &[("fifo", Queueing::Fifo), ("per-vc", Queueing::PerVc)])?,
            vc_capacity: p.need("vc_capacity", Params::cell_limit)?,
            priority: p.opt_list("priority")?,
            weight: p.opt_list("weight")?,
            delay: p.need("delay", Params::time)?,
            port_phy: p.opt_list("port_phy")?,
            line_length: p.need("line_length", Params::length)?,
            port_length: p.opt_list("port_length")?,
            port_framing: p.opt_list("port_framing")?,
            abr: p.opt_list("abr")?,
            abr_settings: PortAbrParams::bind(p)?,
            vcs: p.need("vcs", Params::list)?.to_vec(),
            policy: BufferPolicyParams::bind(p)?,
            input: match p.need_choice("buffering", &[("output", false), ("input-output", true)])? {
                false => None,
                true => Some(InputParams {
                    capacity: p.need("input_capacity", Params::cell_limit)?,
                    speedup: p.need("speedup", Params::float)?,
                    arbitration: p.need_choice("arbitration", &[("round-robin", Arbitration::RoundRobin), ("random", Arbitration::Random), ("oldest-first", Arbitration::OldestFirst)])?,
                    vc_slot_gap: p.need("vc_slot_gap", Params::int)? as u64,
                }),
            },
            shared_capacity: p.need("shared_capacity", Params::cell_limit)?,
            credit: credit::CreditParams::bind(p)?,
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.plan().map(drop)
    }

    /// The parsed translation table.
    pub fn table(&self) -> Result<Vec<VcEntry>, ParamIssue> {
        parse_table(&self.vcs, self.ports).map_err(|m| ParamIssue::new("vcs", m))
    }

    /// Every check, in order, and what they work out.
    pub(super) fn plan(&self) -> Result<Plan, ParamIssue> {
        let n = self.ports;
        let table = self.table()?;
        let rate = self.line.rate(Some(DEFAULT_PHY))?;
        let mut rates = vec![rate; n];
        for entry in self.port_phy.iter().flatten() {
            let (port, r) = parse_port_rate(entry, n).map_err(|m| ParamIssue::new("port_phy", m))?;
            rates[port] = r;
        }
        let mut propagation = vec![fibre_delay(self.line_length); n];
        for entry in self.port_length.iter().flatten() {
            let (port, m) = parse_port_length(entry, n).map_err(|m| ParamIssue::new("port_length", m))?;
            propagation[port] = fibre_delay(m);
        }
        let mut framing = vec![None; n];
        for entry in self.port_framing.iter().flatten() {
            let (port, v) = parse_port_setting(entry, n, "sonet").map_err(|m| ParamIssue::new("port_framing", m))?;
            if v.trim_matches('"') != "sonet" {
                return Err(ParamIssue::new("port_framing", format!("'{entry}': the framing must be sonet")));
            }
            let grid = [3, 12].into_iter().filter_map(SonetGrid::sts_nc).find(|g| Rate::from_bps(g.payload_bps() as f64) == Some(rates[port]));
            framing[port] = Some(grid.ok_or_else(|| ParamIssue::new("port_framing", format!("'{entry}': p{} must run at OC-3c or OC-12c (149.76 or 599.04 Mb/s of cells) to be framed", port + 1)))?);
        }
        let cap = |key: &str, limit: CellLimit| limit.at_least_one(key, "must be at least 1 cell (or \"unlimited\")");
        let capacity = cap("capacity", self.capacity)?;
        let vc_capacity = if self.queueing == Queueing::PerVc { cap("vc_capacity", self.vc_capacity)? } else { None };
        // Output-side VC index per (port, label), in table order.
        let mut out_labels: Vec<Vec<u32>> = vec![Vec::new(); n];
        // (port, label) -> its index in `out_labels[port]` (a linear search per route
        // made building a 100,000-VC table quadratic).
        let mut out_index: std::collections::HashMap<(u16, u32), usize> = std::collections::HashMap::new();
        let mut routes = Vec::with_capacity(table.len());
        let mut route_labels = Vec::with_capacity(table.len());
        for e in &table {
            let mut branches = Vec::with_capacity(e.outs.len());
            for &(o, vc) in &e.outs {
                let labels = &mut out_labels[o as usize];
                let aux = *out_index.entry((o, vc)).or_insert_with(|| {
                    labels.push(vc);
                    labels.len() - 1
                });
                if aux > u16::MAX as usize {
                    return Err(ParamIssue::new("vcs", "more than 65,536 VCs on one output port"));
                }
                branches.push((o, vc, aux as u16));
            }
            routes.push(branches);
            route_labels.push((e.in_port, e.in_vc));
        }
        // Per-VC settings of output ports: "pOUT:VPI/VCI = N" with N in `range`.
        let per_vc = |key: &str, entries: &Option<Vec<String>>, what: &str, range: std::ops::RangeInclusive<u16>, default: u16| -> Result<Vec<Vec<u16>>, ParamIssue> {
            let mut out: Vec<Vec<u16>> = vec![Vec::new(); n];
            for entry in entries.iter().flatten() {
                let bad = |m: String| ParamIssue::new(key, format!("'{entry}': {m}"));
                if self.queueing != Queueing::PerVc {
                    return Err(bad(format!("{key} needs queueing = \"per-vc\" (each VC its own queue)")));
                }
                let (vc, value) = entry.split_once('=').ok_or_else(|| bad(format!("not \"pOUT:VPI/VCI = {}\", e.g. \"p3:1/100 = 1\"", what.to_uppercase())))?;
                let (o, label) = parse_endpoint(vc, n).map_err(bad)?;
                let v: u16 = value.trim().parse().ok().filter(|x| range.contains(x)).ok_or_else(|| bad(format!("the {what} must be a whole number from {} to {}", range.start(), range.end())))?;
                let aux = *out_index.get(&(o, label)).ok_or_else(|| bad(format!("no VC of the table leaves p{} with label {}", o + 1, vc_name(label))))?;
                let row = &mut out[o as usize];
                row.resize(out_labels[o as usize].len(), default);
                row[aux] = v;
            }
            Ok(out)
        };
        let levels: Vec<Vec<u8>> = per_vc("priority", &self.priority, "level", 0..=u16::from(MAX_LEVEL), 0)?
            .into_iter()
            .map(|row| row.into_iter().map(|l| l as u8).collect())
            .collect();
        let weights = per_vc("weight", &self.weight, "weight", 1..=MAX_WEIGHT, 1)?;
        let policy = self.policy.policy()?;
        // ABR: the algorithm of each port named, and for every route the port whose
        // forward VC its backward RM cells belong to: a backward RM cell carries the
        // label of its forward direction (TM 4.0; `abr_dest` keeps it), so one arriving
        // on input pJ with label L belongs to the VC that leaves on output pJ with L.
        let mut abr: Vec<Option<AlgorithmParams>> = vec![None; n];
        for entry in self.abr.iter().flatten() {
            let (port, which) = parse_port_abr(entry, n).map_err(|m| ParamIssue::new("abr", m))?;
            let efci = self.policy.efci_threshold.is_some();
            abr[port] = Some(self.abr_settings.algorithm(which, rates[port].cells_per_s(), efci).map_err(|e| if e.key == "algorithm" { ParamIssue::new("abr", format!("'{entry}': {}", e.msg)) } else { e })?);
        }
        let abr_back: Vec<u16> = route_labels.iter().map(|&(j, vc)| if abr[j as usize].is_some() && out_index.contains_key(&(j, vc)) { j } else { NO_PORT }).collect();
        for (j, a) in abr.iter().enumerate() {
            if matches!(a, Some(AlgorithmParams::Eprca(_) | AlgorithmParams::Erica(_))) && !abr_back.contains(&(j as u16)) {
                return Err(ParamIssue::new("abr", format!("p{} runs an explicit-rate algorithm but no VC leaving p{0} comes back in on p{0} with its label (the table needs an entry \"p{0}:L -> ...\" for a label L that p{0} sends: backward RM cells carry their forward label)", j + 1)));
            }
        }
        let credit = match self.credit.any() {
            false => None,
            true => {
                let plan = credit::CreditPlan::new(&self.credit, n, &mut out_labels, &routes, &route_labels)?;
                if let Some(j) = (0..n).find(|&j| plan.gates[j].is_some() && abr[j].is_some()) {
                    return Err(ParamIssue::new("credit_out", format!("p{} also runs an ABR algorithm; a port is rate-controlled (abr) or credit-controlled (credit_out), not both", j + 1)));
                }
                Some(plan)
            }
        };
        let shared = cap("shared_capacity", self.shared_capacity)?;
        let input = match &self.input {
            None => None,
            Some(ip) => {
                let icap = cap("input_capacity", ip.capacity)?;
                let fastest = rates.iter().map(|r| r.bps()).fold(0.0, f64::max);
                let fabric = Rate::from_bps(fastest * ip.speedup).ok_or_else(|| ParamIssue::new("speedup", "the fabric rate (speedup x the fastest port) is out of range"))?;
                if let Some(e) = table.iter().find(|e| e.outs.len() > MAX_BRANCHES) {
                    return Err(ParamIssue::new("vcs", format!("p{}:{} has {} branches; with buffering = \"input-output\" at most {MAX_BRANCHES}", e.in_port + 1, vc_name(e.in_vc), e.outs.len())));
                }
                Some((icap, fabric, ip.arbitration, ip.vc_slot_gap))
            }
        };
        Ok(Plan { rates, propagation, framing, capacity, vc_capacity, out_labels, levels, weights, routes, route_labels, policy, abr, abr_back, input, shared, credit })
    }
}
