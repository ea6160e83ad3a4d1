//! N-port ATM switch: output-buffered, or with receiving and transmitting buffers.
//!
//! ```text
//!   p1 ──►┐                              ┌──► p1
//!   p2 ──►┤  VPI/VCI lookup per input    ├──► p2      each output: buffer (FIFO, or
//!   ...   ├─ (and replication) ─ delay ─►┤            per-VC queues served round
//!   pN ──►┘                              └──► pN      robin) at the port's line rate
//! ```
//!
//! `buffering = "input-output"` puts a receiving buffer of `input_capacity` cells in
//! front of the fabric at every input and lets the fabric move at most one cell per
//! output per slot (`speedup` × the line rate), choosing among contending inputs by
//! `arbitration` (see [`fabric`]). `shared_capacity` bounds the cells of all output
//! buffers together (a shared-memory switch). Both are off by default: the output-
//! buffered switch is the default.
//!
//! The model of the switches in domingo95 (SynOptics LattisCell 10114: 16 ports at
//! 155 Mb/s, output buffers, NMA counters per port and VC) and lazarou96 (Table 1:
//! per-VC output queues of 256 cells, 4 µs processing). Each input port has a
//! translation table from the arriving VPI/VCI to one or more (output port, VPI/VCI):
//! more than one is a point-to-multipoint VC, whose cells are copied onto every branch
//! (the copies are booked as `replicated` in the conservation ledger). A cell whose
//! VPI/VCI has no entry is dropped (cause `no_route`). After a constant processing
//! delay the cell joins its output port's buffer; a full buffer drops it (cause
//! `buffer_full`). A loop between two of the switch's own ports is an ordinary `link`
//! from one port to the other.
//!
//! Table entries, one string each: `"pIN:VPI/VCI -> pOUT:VPI/VCI[, pOUT:VPI/VCI ...]"`
//! (a bare VCI means VPI 0), e.g. `"p3:0/100 -> p4:0/101, p5:0/201"`.
//!
//! Probes: per output port `<sw>/pJ` the transmitter's `q_*` probes; per output port
//! and VC `<sw>/pJ/vcX`: `port_out_cells` (switched to the port), `port_tx_cells`,
//! `port_drop_cells`; per input port and VC `<sw>/pI/vcX`: `port_rx_cells`; per input
//! port `<sw>/pI`: `sw_rx_cells`, `sw_no_route_cells`; with receiving buffers also
//! `sw_in_drop_cells`, `sw_in_loss_ratio` per input port and `port_in_drop_cells` per
//! input port and VC. Counters restart at warm-up.
//!
//! Files: this one is the switch itself (forwarding, the output ports, the ABR and
//! credit hooks, the kind's declaration); `table.rs` parses the VC table and the
//! per-port settings, `plan.rs` binds the parameters and works out the plan a switch
//! is built from, [`fabric`] holds the receiving buffers and the fabric, [`credit`]
//! the hop-by-hop credit flow control.

pub mod credit;
mod plan;
mod table;
pub mod fabric;

use atmsim_kernel::ByFlow;
use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::PortId;
use hashbrown::HashTable;
use std::collections::VecDeque;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, Rate, SimDuration, SimTime};

use crate::cell::{book_in_flight, vc_name, Cell};
use crate::drops::Drops;
use crate::observe::{observe, Control, Observation};
use crate::control::abr::port::{forward_rm, PortAbr};
use crate::payload::Payload;
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::link::transmitter::{CellBuffer, Transmitter, PHY_NAMES};
use crate::{PortDecl, Ports};
use fabric::{InputStage, Transfer, ARBITRATION_NAMES};
pub use plan::{InputParams, Queueing, SwitchParams, DEFAULT_PHY};
use plan::{Plan, NO_PORT};
pub use table::{parse_table, VcEntry};

pub const PARAMS: [ParamSpec; 25] = [
    ParamSpec { name: "ports", ty: ParamType::Int { min: 1, max: 4096 }, default: Some("16"), required: false, help: "number of ports, named p1 … pN", source: "domingo95 section 2 (SynOptics LattisCell 10114: 16 ports)" },
    ParamSpec { name: "phy", ty: ParamType::Choice(&PHY_NAMES), default: None, required: false, help: "line rate of every output port (default OC-3c; or give rate)", source: "domingo95 section 2 (155 Mb/s ports)" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "output line rate instead of phy", source: "" },
    ParamSpec { name: "capacity", ty: ParamType::SizeOr("unlimited"), default: Some("unlimited"), required: false, help: "output buffer per port, cells (domingo95 does not give it: calibrate on conditions only)", source: "not given by the papers" },
    ParamSpec { name: "queueing", ty: ParamType::Choice(&["fifo", "per-vc"]), default: Some("fifo"), required: false, help: "one FIFO per output port, or per-VC queues served round robin", source: "lazarou96 Table 1 uses per-VC queues" },
    ParamSpec { name: "vc_capacity", ty: ParamType::SizeOr("unlimited"), default: Some("256 cells"), required: false, help: "per-VC queue size with queueing = \"per-vc\"", source: "lazarou96 Table 1 (256 cells per VC)" },
    ParamSpec { name: "priority", ty: ParamType::StrList, default: None, required: false, help: "priority levels of VCs leaving a port, with queueing = \"per-vc\": \"pOUT:VPI/VCI = LEVEL\" (0-7; 0, every VC's default, is served first; round robin within a level; strict and non-preemptive between levels)", source: "ATM switch practice (service categories CBR, rt-VBR before nrt-VBR, ABR, UBR); atmsim convention" },
    ParamSpec { name: "weight", ty: ParamType::StrList, default: None, required: false, help: "weighted round robin of VCs leaving a port, with queueing = \"per-vc\": \"pOUT:VPI/VCI = W\" (1-4096 cells per turn; 1, every VC's default, is plain round robin); within a priority level", source: "ATM switch practice (weighted round robin among per-VC queues); atmsim convention" },
    ParamSpec { name: "delay", ty: ParamType::Time, default: Some("0 s"), required: false, help: "processing delay from input to output buffer", source: "lazarou96 Table 1 gives 4 us" },
    ParamSpec { name: "port_phy", ty: ParamType::StrList, default: None, required: false, help: "line rates of particular output ports: \"pN = PRESET\" or \"pN = RATE\" (e.g. \"p2 = TAXI-100\")", source: "lazarou96 Figures 8, 10, 12 (OC-3c, TAXI and DS-3 ports on one path)" },
    ParamSpec { name: "line_length", ty: ParamType::Length, default: Some("0 m"), required: false, help: "fibre length of the line leaving every output port: propagation at 5 µs/km after the port's transmission (the port is the line's transmitter: no link of the same rate behind it, which would serialise each cell twice)", source: "SPEC section 3 (5 µs/km); 0: the next component is at the port" },
    ParamSpec { name: "port_length", ty: ParamType::StrList, default: None, required: false, help: "fibre length of the line leaving particular output ports: \"pN = LENGTH\" (e.g. \"p3 = 1333 km\"; the others take line_length)", source: "dastangoo96 section 2.1 (4 km LAN links, 4,000 and 1,333 km WAN links)" },
    ParamSpec { name: "port_framing", ty: ParamType::StrList, default: None, required: false, help: "SONET framing of particular output ports: \"pN = sonet\" (the port's line must be OC-3c or OC-12c: cell slots on the STS-3c/STS-12c frame, idle cells in empty slots; see the link kind's framing)", source: "ITU-T G.707, ANSI T1.105, I.432.2; evans96 (the gateway's transpose inserts idle cells and the SONET overhead)" },
    ParamSpec { name: "abr", ty: ParamType::StrList, default: None, required: false, help: "ABR switch algorithm of particular output ports: \"pN = efci\", \"pN = eprca\", \"pN = erica\" or \"pN = erica+\" (ERICA with the queue control on that port) (settings: the av … qdlf parameters; efci needs efci_threshold)", source: "TM 4.0 section 5.10.6; issue 15" },
    ParamSpec { name: "buffering", ty: ParamType::Choice(&["output", "input-output"]), default: Some("output"), required: false, help: "where cells wait: \"output\" (output-buffered: a cell goes straight to its output buffer) or \"input-output\" (a receiving buffer per input, a fabric with speedup and arbitration, and the output buffers)", source: "domingo95 sections 2.2, 5 (receiving and transmitting buffers per port, NMA counters at both)" },
    ParamSpec { name: "input_capacity", ty: ParamType::SizeOr("unlimited"), default: Some("64 cells"), required: false, help: "receiving buffer per input port with buffering = \"input-output\" (not given by the papers: a parameter)", source: "not given by the papers; atmsim convention" },
    ParamSpec { name: "speedup", ty: ParamType::Float { min: 1.0, max: 64.0 }, default: Some("1"), required: false, help: "fabric rate / fastest port line rate with buffering = \"input-output\" (1: outputs never receive faster than they send, all loss at the inputs)", source: "not given by the papers; atmsim convention" },
    ParamSpec { name: "arbitration", ty: ParamType::Choice(&ARBITRATION_NAMES), default: Some("round-robin"), required: false, help: "which input an output serves among those contending for it, with buffering = \"input-output\"", source: "not given by the papers; atmsim convention" },
    ParamSpec { name: "vc_slot_gap", ty: ParamType::Int { min: 1, max: 64 }, default: Some("1"), required: false, help: "with buffering = \"input-output\": fabric slots between two cells of one VC crossing the fabric (1: no restriction; 2: the AN2's every-other-slot restriction)", source: "evans96 (the DEC AN2: a single source transmits at most in every other cell slot)" },
    ParamSpec { name: "shared_capacity", ty: ParamType::SizeOr("unlimited"), default: Some("unlimited"), required: false, help: "cells in all output buffers together (a shared-memory switch; each port's capacity still applies); unlimited: no shared bound", source: "atmsim convention" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: true, help: "translation table: \"pIN:VPI/VCI -> pOUT:VPI/VCI[, pOUT:VPI/VCI ...]\"", source: "scenario" },
    // Every output buffer: EPD, PPD, EFCI marking (dastangoo96's EFCI switch: 500 cells),
    // selective discard of CLP = 1 cells.
    crate::control::buffer_policy::PARAMS[0],
    crate::control::buffer_policy::PARAMS[1],
    crate::control::buffer_policy::PARAMS[2],
    crate::control::buffer_policy::PARAMS[3],
];

pub const PROBES: [ProbeSpec; 8] = [
    ProbeSpec { name: "sw_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells received on an input port (component <sw>/pI)" },
    ProbeSpec { name: "sw_no_route_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped for an unknown VPI/VCI (component <sw>/pI)" },
    ProbeSpec { name: "port_rx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells received per input port and VC (component <sw>/pI/vcX)" },
    ProbeSpec { name: "port_out_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells switched to an output port per VC (component <sw>/pJ/vcX)" },
    ProbeSpec { name: "port_tx_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells transmitted (and port_drop_cells: dropped at the buffer) per output port and VC (<sw>/pJ/vcX); the port's q_* probes at <sw>/pJ" },
    ProbeSpec { name: "sw_in_drop_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped at the input's receiving buffer, buffering = \"input-output\" (component <sw>/pI)" },
    ProbeSpec { name: "sw_in_loss_ratio", unit: "1", kind: ProbeKind::Gauge, help: "sw_in_drop_cells / sw_rx_cells, buffering = \"input-output\" (component <sw>/pI)" },
    ProbeSpec { name: "port_in_drop_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped at the receiving buffer per input port and VC, buffering = \"input-output\" (<sw>/pI/vcX)" },
];


/// Ports p1 … pN; inputs optional, outputs required when the table uses them.
pub fn ports(p: &Params) -> Ports {
    // The parameters were bound and validated before ports are asked for.
    let Ok(sp) = SwitchParams::bind(p) else { return Ports::default() };
    let (n, table) = (sp.ports, sp.table().unwrap_or_default());
    // A credit_in port sends credit cells back on its output.
    let credit_in = sp.credit.in_ports(n).unwrap_or_default();
    let used: Vec<bool> = (0..n).map(|j| credit_in.contains(&j) || table.iter().any(|e| e.outs.iter().any(|o| o.0 as usize == j))).collect();
    Ports {
        inputs: (1..=n).map(|i| PortDecl::new(format!("p{i}"), false, false)).collect(),
        outputs: (1..=n).map(|i| PortDecl::new(format!("p{i}"), false, used[i - 1])).collect(),
    }
}

/// The switch's timers, as typed keys. Each is one kernel tag (the values the switch
/// has always used, so that runs keep their traces): [`SwitchTimer::tag`] encodes,
/// [`SwitchTimer::of`] decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SwitchTimer {
    /// The head of the switching-delay line is due.
    Delay,
    /// The input-buffered fabric's cell slot.
    Fabric,
    /// Output port `j`'s transmitter (its own two tags, `1 + 2j` and `2 + 2j`: the
    /// field is the tag).
    Port(u32),
    /// The credit gate of output port `j`'s cell cycle.
    Gate(u32),
    /// The credit packers' flush deadline.
    Flush,
}

impl SwitchTimer {
    const fn tag(self) -> u32 {
        match self {
            SwitchTimer::Delay => 0,
            SwitchTimer::Fabric => u32::MAX,
            SwitchTimer::Port(t) => t,
            SwitchTimer::Gate(j) => credit::TAG_GATE + j,
            SwitchTimer::Flush => credit::TAG_FLUSH,
        }
    }

    /// Output port `j`'s transmitter's first tag.
    const fn port(j: u32) -> u32 {
        1 + 2 * j
    }

    #[inline(always)]
    fn of(tag: u32) -> SwitchTimer {
        // The ports' ticks first: they are most of a switch's timers.
        match tag {
            0 => SwitchTimer::Delay,
            t if t < credit::TAG_GATE => SwitchTimer::Port(t),
            u32::MAX => SwitchTimer::Fabric,
            credit::TAG_FLUSH => SwitchTimer::Flush,
            t => SwitchTimer::Gate(t - credit::TAG_GATE),
        }
    }
}

/// The receiving buffers, the fabric's clock and the input counters.
#[derive(Clone, Debug)]
struct Inputs {
    stage: InputStage,
    fabric: Rate,
    /// The next fabric slot's index (slot k starts at `fabric.cell_train_offset(k)`).
    next_slot: u64,
    armed: bool,
    transfers: Vec<Transfer>,
    // since warm-up
    dropped: Vec<u64>,
    route_dropped: Vec<u64>,
    // whole run
    drops: Drops,
}

#[derive(Clone, Debug)]
pub struct Switch {
    /// Every route, found by (input port, label): see [`Hop`].
    hops: HashTable<Hop>,
    /// Per input port: whether any route starts there.
    in_routed: Vec<bool>,
    /// Per route: branches (output port, new label, output-side VC index).
    routes: Vec<Vec<(u16, u32, u16)>>,
    route_labels: Vec<(u16, u32)>,
    delay: SimDuration,
    line: VecDeque<(SimTime, u16, Cell)>,
    out: Vec<Transmitter>,
    /// Whether any output port runs an ABR algorithm (else the ABR code is never entered).
    abr_on: bool,
    /// Per output port: its ABR algorithm.
    abr: Vec<Option<PortAbr>>,
    /// Per route: the port whose forward VC its backward RM cells belong to, or NO_PORT.
    abr_back: Vec<u16>,
    // since warm-up (and each route's count in its `Hop`)
    in_rx: Vec<u64>,
    no_route: Vec<u64>,
    // whole run
    no_route_drops: Drops,
    replicated_by_flow: ByFlow<u64>,
    /// Receiving buffers and fabric (None: output-buffered).
    inputs: Option<Box<Inputs>>,
    /// Shared-memory bound on all output buffers together.
    shared: Option<usize>,
    /// Credit flow control on some ports (None: none, the common case).
    credit: Option<Box<credit::SwitchCredit>>,
}

/// One route as the cell path reads it. A cell's route is found by (input port,
/// label) in a hash table, and the route's first branch and counter sit in the same
/// 32-byte entry: with thousands of VCs this is one or two cache misses per cell
/// where the sorted per-port table's binary search, the route list and the counter
/// array were six to eight (docs/log/performance.md, issue 14 "scale").
#[derive(Clone, Copy, Debug)]
struct Hop {
    /// `in_port << 32 | in_label`.
    key: u64,
    /// Cells received on the route since the warm-up.
    rx: u64,
    /// The route's index (into `routes`, `route_labels`, `abr_back`).
    r: u32,
    /// The first branch: output label, output port, output-side VC index.
    vc: u32,
    o: u16,
    aux: u16,
    /// More than one branch (point-to-multipoint): read them from `routes[r]`.
    many: bool,
}

fn hop_key(port: usize, vc: u32) -> u64 {
    (port as u64) << 32 | u64::from(vc)
}

/// The table's hash of a key: a multiplicative hash with its high half folded into
/// the low half, so that the input port (the key's high half) moves the bucket too.
fn hop_hash(key: u64) -> u64 {
    let h = key.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    h ^ (h >> 32)
}

impl Switch {
    /// A switch (its checks are [`SwitchParams::validate`]'s).
    /// `rng` is used only by `arbitration = "random"`.
    pub fn new(params: SwitchParams, rng: atmsim_kernel::Stream) -> Result<Self, ParamIssue> {
        let Plan { rates, propagation, framing, capacity, vc_capacity, out_labels, levels, weights, routes, route_labels, policy, abr, abr_back, input, shared, credit } = params.plan()?;
        let n = params.ports;
        let per_vc = params.queueing == Queueing::PerVc;
        let mut out: Vec<Transmitter> = (0..n)
            .map(|j| {
                let buffer = if per_vc { CellBuffer::per_vc(out_labels[j].len(), vc_capacity, capacity).with_levels(levels[j].clone()).with_weights(weights[j].clone()) } else { CellBuffer::fifo(capacity) };
                let mut t = Transmitter::with(rates[j], buffer, propagation[j], j as u16, SwitchTimer::port(j as u32));
                t.count_per_vc(out_labels[j].clone());
                t.set_framing(framing[j]);
                t.set_policy(policy.clone());
                t
            })
            .collect();
        let inputs = input.map(|(icap, fabric, arb, gap)| {
            Box::new(Inputs {
                stage: InputStage::new(n, n, icap, arb, rng).with_vc_gap(gap),
                fabric,
                next_slot: 0,
                armed: false,
                transfers: Vec::new(),
                dropped: vec![0; n],
                route_dropped: vec![0; routes.len()],
                drops: Drops::new("input_full"),
            })
        });
        let credit = credit.map(|plan| {
            // Ports whose departures return credit report them.
            for (j, t) in out.iter_mut().enumerate() {
                if plan.back[j].iter().any(Option::is_some) {
                    t.keep_departures();
                }
            }
            Box::new(credit::SwitchCredit::new(plan, &rates, vc_capacity, capacity))
        });
        if shared.is_none() && credit.is_none() {
            // Ports nothing else reads at departure instants (no credit returned as
            // cells leave, no shared-memory bound) may compute their departures on
            // arrival like a standalone fifo, if FIFO without SONET framing (the
            // transmitter checks those; EFCI marks it decides as cells arrive). The
            // ABR algorithms read the queue at arrivals only, which is then brought up
            // to date first (`Transmitter::queue_len_at`).
            out.iter_mut().for_each(Transmitter::allow_compute);
        }
        let mut hops = HashTable::with_capacity(routes.len());
        let mut in_routed = vec![false; n];
        for (r, (&(ip, vc), branches)) in route_labels.iter().zip(&routes).enumerate() {
            let (o, ovc, aux) = branches.first().copied().unwrap_or((0, 0, 0));
            let hop = Hop { key: hop_key(ip as usize, vc), rx: 0, r: r as u32, vc: ovc, o, aux, many: branches.len() != 1 };
            hops.insert_unique(hop_hash(hop.key), hop, |h: &Hop| hop_hash(h.key));
            in_routed[ip as usize] = true;
        }
        Ok(Switch {
            inputs,
            shared,
            hops,
            in_routed,
            routes,
            route_labels,
            delay: params.delay,
            line: VecDeque::new(),
            out,
            abr_on: abr.iter().any(Option::is_some),
            abr: abr.into_iter().map(|a| a.map(PortAbr::new)).collect(),
            abr_back,
            in_rx: vec![0; n],
            no_route: vec![0; n],
            no_route_drops: Drops::new("no_route"),
            replicated_by_flow: ByFlow::new(),
            credit,
        })
    }
    /// The cell of route `hop` onto each of its branches: into the output buffer, or
    /// the delay line. `ABR`: some port runs an ABR algorithm.
    #[inline(always)]
    fn switch_cell<const ABR: bool>(&mut self, hop: Hop, cell: Cell, ctx: &mut Cx<'_>) {
        if !hop.many {
            self.to_branch::<ABR>(hop.o, Cell { vc: hop.vc, aux: hop.aux, ..cell }, ctx);
            return;
        }
        let r = hop.r as usize;
        for b in 0..self.routes[r].len() {
            let (o, vc, aux) = self.routes[r][b];
            let mut c = Cell { vc, aux, ..cell };
            if b > 0 {
                *self.replicated_by_flow.entry(cell.flow) += 1;
                // Each copy carries its own copy of the payload.
                if cell.payload.is_some() {
                    c.payload = ctx.store().payloads.duplicate(cell.payload);
                }
            }
            self.to_branch::<ABR>(o, c, ctx);
        }
    }

    /// A cell (or copy) for output `o`: into its buffer, or the delay line.
    #[inline(always)]
    fn to_branch<const ABR: bool>(&mut self, o: u16, c: Cell, ctx: &mut Cx<'_>) {
        if self.delay.ps() == 0 {
            self.enter::<ABR>(o as usize, c, ctx);
        } else {
            let at = ctx.now.plus(self.delay);
            if self.line.is_empty() {
                ctx.schedule_at(at, SwitchTimer::Delay.tag());
            }
            self.line.push_back((at, o, c));
        }
    }

    /// A cell joins output `o`'s buffer, unless the shared memory is full.
    #[inline(always)]
    fn enter<const ABR: bool>(&mut self, o: usize, c: Cell, ctx: &mut Cx<'_>) {
        if self.credit.is_some() {
            return self.enter_credit(o, c, ctx);
        }
        if let Some(s) = self.shared {
            if self.out.iter().map(Transmitter::queue_len).sum::<usize>() >= s {
                self.out[o].refuse(c, ctx);
                return;
            }
        }
        if ABR {
            self.abr_join(o, c, ctx);
        } else {
            self.out[o].accept(c, ctx);
        }
    }

    /// [`Switch::enter`] when some port runs credit flow control: a cell for a
    /// credit_out port waits in its gate (or is dropped there as `buffer_full`); the
    /// others join their buffer, and the departures that happen credit their VCs.
    #[cold]
    fn enter_credit(&mut self, o: usize, c: Cell, ctx: &mut Cx<'_>) {
        if let Some(cr) = self.credit.as_deref_mut() {
            if let (Some(g), false) = (cr.gates[o].as_mut(), c.vc == cr.vc) {
                if !g.has_room(c.vc) {
                    self.out[o].refuse(c, ctx);
                    return;
                }
                if let Err(c) = g.gate.enqueue(c) {
                    return ctx.fail(format!("switch: {} on credit_out port p{} is not one of its gated VCs", vc_name(c.vc), o + 1));
                }
                if let Some(at) = g.gate.wake(ctx.now) {
                    ctx.schedule_at(at, SwitchTimer::Gate(o as u32).tag());
                }
                return;
            }
        }
        if let Some(s) = self.shared {
            if self.out.iter().map(Transmitter::queue_len).sum::<usize>() >= s {
                self.out[o].refuse(c, ctx);
                return;
            }
        }
        if self.abr_on {
            self.abr_join(o, c, ctx);
        } else {
            self.out[o].accept(c, ctx);
        }
        self.settle(o, ctx);
    }

    /// The departures output `o` reported: each credits its VC at its credit_in port;
    /// the credit cells due go back.
    fn settle(&mut self, o: usize, ctx: &mut Cx<'_>) {
        let Some(cr) = self.credit.as_deref_mut() else { return };
        let mut departed = std::mem::take(&mut cr.departed);
        self.out[o].take_departures(&mut departed);
        if departed.is_empty() {
            cr.departed = departed;
            return;
        }
        let now = ctx.now;
        let mut sends = Vec::new();
        for (aux, flow) in departed.drain(..) {
            sends.extend(cr.on_departure(now, o, aux, flow));
        }
        cr.departed = departed;
        self.send_credit(sends, ctx);
    }

    /// Sends credit cells on their ports (they never wait for credit) and re-arms the
    /// packing timer.
    fn send_credit(&mut self, sends: Vec<(usize, Cell, atmsim_wire::credit::CreditCellRepr)>, ctx: &mut Cx<'_>) {
        for (i, mut cell, repr) in sends {
            cell.payload = ctx.store().payloads.insert(Payload::Credit(repr));
            self.out[i].accept(cell, ctx);
            self.settle(i, ctx);
        }
        if let Some(cr) = self.credit.as_deref_mut() {
            if let Some(d) = cr.deadline() {
                if cr.flush.due() != Some(d) {
                    cr.flush.arm(d, SwitchTimer::Flush.tag(), ctx);
                }
            }
        }
    }

    /// A credit cell arriving on input `i`, a credit_out port: its entries feed the
    /// port's gate. False if `cell` is no credit cell (it is switched as usual).
    #[cold]
    fn take_credit(&mut self, i: usize, cell: &Cell, ctx: &mut Cx<'_>) -> bool {
        let Some(g) = self.credit.as_deref_mut().and_then(|cr| cr.gates[i].as_mut()) else { return false };
        let Some(repr) = credit::credit_of(cell, &ctx.store().payloads) else { return false };
        ctx.store().payloads.take(cell.payload);
        if !observe(Observation::Control { cell, control: Control::CreditCell(&repr) }, ctx) {
            return true;
        }
        g.gate.on_credit(cell.flow, repr.entries());
        if let Some(at) = g.gate.wake(ctx.now) {
            ctx.schedule_at(at, SwitchTimer::Gate(i as u32).tag());
        }
        true
    }

    /// A credit timer: a gate's cell cycle, or the packers' deadline.
    #[cold]
    fn credit_timer(&mut self, key: SwitchTimer, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let Some(cr) = self.credit.as_deref_mut() else { return };
        let j = match key {
            SwitchTimer::Flush => {
                if cr.flush.fire(now) {
                    let sends = cr.on_flush(now);
                    self.send_credit(sends, ctx);
                }
                return;
            }
            SwitchTimer::Gate(j) => j as usize,
            _ => return ctx.fail(format!("switch: {key:?} is not a credit timer")),
        };
        let Some(g) = cr.gates.get_mut(j).and_then(Option::as_mut) else {
            return ctx.fail(format!("switch credit timer {key:?} for no gated port"));
        };
        let (cell, next) = g.gate.on_slot();
        if let Some(at) = next {
            ctx.schedule_at(at, key.tag());
        }
        if let Some(cell) = cell {
            self.out[j].accept(cell, ctx);
            self.settle(j, ctx);
        }
    }

    /// A cell of route `r` arriving on input `i` joins its receiving buffer (or is
    /// dropped there); the fabric's clock starts if it was idle.
    fn to_input(&mut self, i: usize, r: usize, cell: Cell, ctx: &mut Cx<'_>) {
        let Some(inp) = self.inputs.as_mut() else { return };
        if !inp.stage.admit(i, r as u32, self.routes[r].len(), cell, ctx.now) {
            inp.dropped[i] += 1;
            inp.route_dropped[r] += 1;
            inp.drops.drop(&cell, ctx);
            return;
        }
        if !inp.armed {
            // The first slot that starts at or after now.
            let k = inp.fabric.slot_after(ctx.now);
            let k = if k > 0 && inp.fabric.cell_train_offset(k - 1).0 == ctx.now.0 { k - 1 } else { k };
            inp.next_slot = k.max(inp.next_slot);
            inp.armed = true;
            ctx.schedule_at(SimTime(inp.fabric.cell_train_offset(inp.next_slot).0), SwitchTimer::Fabric.tag());
        }
    }

    /// One fabric slot: the arbiter's transfers go to their branches.
    fn fabric_slot(&mut self, ctx: &mut Cx<'_>) {
        let Some(mut inp) = self.inputs.take() else { return };
        let mut transfers = std::mem::take(&mut inp.transfers);
        inp.stage.slot(inp.next_slot, &self.routes, &mut transfers);
        inp.next_slot += 1;
        inp.armed = !inp.stage.is_empty();
        if inp.armed {
            ctx.schedule_at(SimTime(inp.fabric.cell_train_offset(inp.next_slot).0), SwitchTimer::Fabric.tag());
        }
        self.inputs = Some(inp);
        for t in transfers.drain(..) {
            let (o, vc, aux) = self.routes[t.route as usize][t.branch as usize];
            let mut c = Cell { vc, aux, ..t.cell };
            if !t.last {
                // A copy: the cell stays for its other branches, with its payload.
                *self.replicated_by_flow.entry(t.cell.flow) += 1;
                if t.cell.payload.is_some() {
                    c.payload = ctx.store().payloads.duplicate(t.cell.payload);
                }
            }
            if self.abr_on {
                self.to_branch::<true>(o, c, ctx);
            } else {
                self.to_branch::<false>(o, c, ctx);
            }
        }
        if let Some(inp) = self.inputs.as_mut() {
            inp.transfers = transfers;
        }
    }

    /// A cell joins output port `o`'s buffer; the port's ABR algorithm (if any) sees
    /// it: a forward RM cell gives its VC's CCR and makes the VC an ABR one; the cells
    /// of ABR VCs are the port's ABR input, the others (CBR, VBR, and an ABR VC's cells
    /// before its first forward RM cell) load ERICA's link before ABR's share of it.
    #[cold]
    fn abr_join(&mut self, o: usize, c: Cell, ctx: &mut Cx<'_>) {
        let Some(abr) = self.abr[o].as_mut().filter(|a| a.reads_forward()) else {
            self.out[o].accept(c, ctx);
            return;
        };
        let rm = forward_rm(ctx.store().payloads.get(c.payload));
        let (now, vc) = (ctx.now, c.vc);
        self.out[o].accept(c, ctx);
        abr.on_join(now, vc, rm.as_ref(), self.out[o].queue_len() as u64);
    }

    /// A cell arriving on route `r`: if it is a backward RM cell of a VC whose forward
    /// cells leave on an ABR port, that port's algorithm writes ER / CI into it. (The
    /// test is made here, inline, at every cell; the work, rare, out of line.)
    #[inline(always)]
    fn abr_backward(&mut self, r: usize, cell: &Cell, ctx: &mut Cx<'_>) {
        let j = self.abr_back[r];
        if j != NO_PORT && cell.payload.is_some() {
            self.abr_backward_rm(j, cell, ctx);
        }
    }

    /// [`Switch::abr_backward`]'s work, for a cell with a payload on a route whose
    /// forward direction leaves on ABR port `j`.
    #[cold]
    #[inline(never)]
    fn abr_backward_rm(&mut self, j: u16, cell: &Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let Some(q) = self.out.get_mut(j as usize).map(|t| t.queue_len_at(now) as u64) else { return };
        if let (Some(Payload::Rm(rm)), Some(abr)) = (ctx.store().payloads.get_mut(cell.payload), self.abr[j as usize].as_mut()) {
            if rm.backward {
                abr.on_backward(now, cell.vc, rm, q);
            }
        }
    }
}



impl crate::kind::Kind for Switch {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = SwitchParams::bind(p)?;
        params.validate()?;
        Switch::new(params, b.stream("arbitration"))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        self.out.iter_mut().for_each(|t| t.choose_path(ctx));
    }
    fn settle(&mut self, before: SimTime) {
        self.out.iter_mut().for_each(|t| t.depart_before(before));
    }
    #[inline]
    fn on_cell(&mut self, port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let i = port as usize;
        self.in_rx[i] += 1;
        if self.credit.is_some() && self.take_credit(i, &cell, ctx) {
            return;
        }
        let key = hop_key(i, cell.vc);
        let Some(hop) = self.hops.find_mut(hop_hash(key), |h| h.key == key) else {
            self.no_route[i] += 1;
            self.no_route_drops.drop(&cell, ctx);
            return;
        };
        hop.rx += 1;
        let hop = *hop;
        let r = hop.r as usize;
        if self.inputs.is_some() {
            if self.abr_on {
                self.abr_backward(r, &cell, ctx);
            }
            self.to_input(i, r, cell, ctx);
        } else if self.abr_on {
            self.abr_backward(r, &cell, ctx);
            self.switch_cell::<true>(hop, cell, ctx);
        } else {
            self.switch_cell::<false>(hop, cell, ctx);
        }
    }
    #[inline]
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        match SwitchTimer::of(tag) {
            SwitchTimer::Delay => {
                let Some((_, o, c)) = self.line.pop_front() else {
                    ctx.fail("switch delay timer with an empty delay line".into());
                    return;
                };
                if let Some(&(next, _, _)) = self.line.front() {
                    ctx.schedule_at(next, SwitchTimer::Delay.tag());
                }
                if self.abr_on {
                    self.enter::<true>(o as usize, c, ctx);
                } else {
                    self.enter::<false>(o as usize, c, ctx);
                }
            }
            SwitchTimer::Fabric => self.fabric_slot(ctx),
            key @ (SwitchTimer::Gate(_) | SwitchTimer::Flush) => self.credit_timer(key, ctx),
            SwitchTimer::Port(tag) => {
                let j = ((tag - 1) / 2) as usize;
                match self.out.get_mut(j) {
                    Some(t) => t.tick(tag, ctx),
                    None => ctx.fail(format!("switch timer {tag} for no port")),
                }
                if self.credit.is_some() {
                    self.settle(j, ctx);
                }
            }
        }
    }

    /// The index of output port `p<N>`'s transmitter series `name`.
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let n = crate::series::parse_port(sub, self.out.len())?;
        crate::series::find(&crate::link::transmitter::SERIES, name).map(|q| crate::series::code(n as u64 - 1, q))
    }
    fn sample(&self, index: u64) -> f64 {
        let (port, q) = crate::series::split(index);
        self.out.get(port as usize).map_or(f64::NAN, |t| t.quantity(q))
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.out.iter_mut().for_each(|t| t.reset_stats(now));
        self.abr.iter_mut().flatten().for_each(PortAbr::reset_stats);
        if let Some(cr) = self.credit.as_deref_mut() {
            cr.reset_stats();
        }
        self.hops.iter_mut().for_each(|h| h.rx = 0);
        self.in_rx.iter_mut().for_each(|x| *x = 0);
        self.no_route.iter_mut().for_each(|x| *x = 0);
        if let Some(inp) = self.inputs.as_mut() {
            inp.dropped.iter_mut().for_each(|x| *x = 0);
            inp.route_dropped.iter_mut().for_each(|x| *x = 0);
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        if let Some(cr) = self.credit.as_deref() {
            cr.report(path, out);
        }
        for (j, t) in self.out.iter().enumerate() {
            let used = self.routes.iter().any(|r| r.iter().any(|b| b.0 as usize == j)) || self.credit.as_deref().is_some_and(|cr| cr.is_return_port(j));
            if used {
                t.report(now, &format!("{path}/p{}", j + 1), out);
                if let Some(a) = &self.abr[j] {
                    a.report(&format!("{path}/p{}", j + 1), out);
                }
            }
        }
        for i in 0..self.in_rx.len() {
            if self.in_rx[i] > 0 || self.in_routed[i] {
                let name = format!("{path}/p{}", i + 1);
                out.push(&name, "sw_rx_cells", "count", self.in_rx[i] as f64, "cells");
                out.push(&name, "sw_no_route_cells", "count", self.no_route[i] as f64, "cells");
                if let Some(inp) = &self.inputs {
                    out.push(&name, "sw_in_drop_cells", "count", inp.dropped[i] as f64, "cells");
                    let ratio = if self.in_rx[i] > 0 { inp.dropped[i] as f64 / self.in_rx[i] as f64 } else { f64::NAN };
                    out.push(&name, "sw_in_loss_ratio", "value", ratio, "1");
                }
            }
        }
        let mut route_rx = vec![0u64; self.route_labels.len()];
        self.hops.iter().for_each(|h| route_rx[h.r as usize] = h.rx);
        for (r, &(ip, vc)) in self.route_labels.iter().enumerate() {
            out.push(&format!("{path}/p{}/{}", ip + 1, vc_name(vc)), "port_rx_cells", "count", route_rx[r] as f64, "cells");
            if let Some(inp) = &self.inputs {
                out.push(&format!("{path}/p{}/{}", ip + 1, vc_name(vc)), "port_in_drop_cells", "count", inp.route_dropped[r] as f64, "cells");
            }
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        self.out.iter().for_each(|t| t.ledger(l));
        self.no_route_drops.ledger(l);
        if let Some(cr) = self.credit.as_deref() {
            cr.ledger(l);
        }
        for (f, &n) in self.replicated_by_flow.iter() {
            l.add_replicated(f, n);
        }
        for (_, _, c) in &self.line {
            book_in_flight(l, c);
        }
        if let Some(inp) = &self.inputs {
            inp.drops.ledger(l);
            inp.stage.for_each(|c| book_in_flight(l, c));
        }
    }
}

/// The `switch` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "switch",
    help: "N-port ATM switch, output-buffered or (buffering = \"input-output\") with receiving buffers, fabric speedup and arbitration; optional shared-memory bound; VPI/VCI translation, point-to-multipoint, per-port FIFO or per-VC round-robin queues, per-port per-VC counters, ABR switch algorithms (EFCI, EPRCA, ERICA) per output port",
    source: "domingo95 section 2 (SynOptics LattisCell); lazarou96 Table 1",
    params: &[&crate::switch::PARAMS, &crate::control::abr::port::PARAMS, &crate::switch::credit::PARAMS],
    inputs: &[crate::kind::PortSpec::cells("p<N>", false)],
    outputs: &[crate::kind::PortSpec::cells("p<N>", false)],
    ports: Some(crate::switch::ports),
    probes: &[&crate::switch::PROBES, &crate::link::transmitter::PROBES, &crate::control::buffer_policy::PROBES, &crate::control::abr::port::PROBES, &crate::link::transmitter::FRAMING_PROBES, &crate::switch::credit::PROBES, &crate::control::credit::gate::PROBES],
    series: &[crate::series::KindSeries { at: "p<N>", series: &crate::link::transmitter::SERIES }],
    is_source: false,
    forwards_only: true,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_syntax_and_errors() {
        let t = parse_table(&["p3:0/100 -> p4:0/101, p5:201".into(), "p1:92 -> p4:92".into()], 16).unwrap();
        assert_eq!(t[0], VcEntry { in_port: 2, in_vc: 100, outs: vec![(3, 101), (4, 201)] });
        assert_eq!(t[1].in_vc, 92);
        let e = parse_table(&["p17:1 -> p1:1".into()], 16).unwrap_err();
        assert!(e.contains("p17 does not exist"), "{e}");
        let e = parse_table(&["p1:1 p2:1".into()], 16).unwrap_err();
        assert!(e.contains("expected"), "{e}");
        let e = parse_table(&["p1:1 -> p2:1".into(), "p1:0/1 -> p3:1".into()], 16).unwrap_err();
        assert!(e.contains("already has an entry"), "{e}");
        let e = parse_table(&["p1:1 -> p2:1, p2:5".into()], 16).unwrap_err();
        assert!(e.contains("two branches"), "{e}");
        let e = parse_table(&["p1:5000/1 -> p2:1".into()], 16).unwrap_err();
        assert!(e.contains("VPI"), "{e}");
    }

    /// The typed keys encode to the tags the switch has always used (the golden
    /// fingerprints pin the traces that schedule them) and decode back.
    #[test]
    fn timer_keys_round_trip_through_the_switchs_tags() {
        let keys = [
            (SwitchTimer::Delay, 0),
            (SwitchTimer::Port(SwitchTimer::port(0)), 1),
            (SwitchTimer::Port(SwitchTimer::port(0) + 1), 2),
            (SwitchTimer::Port(SwitchTimer::port(4095) + 1), 2 * 4095 + 2),
            (SwitchTimer::Gate(0), 1 << 30),
            (SwitchTimer::Gate(7), (1 << 30) + 7),
            (SwitchTimer::Flush, u32::MAX - 1),
            (SwitchTimer::Fabric, u32::MAX),
        ];
        for (key, tag) in keys {
            assert_eq!(key.tag(), tag, "{key:?}");
            assert_eq!(SwitchTimer::of(tag), key, "{tag}");
        }
    }
}
