//! The `credit_sender` kind: the upstream node of hop-by-hop credit flow control
//! (evans96's WAN variant) — a linecard with per-VC queues that sends a VC's cell only
//! while it holds credit for it, fed by credit cells through the entry FIFO
//! ([`CreditLinecard`], one entry per cell cycle).
//!
//! ```text
//!   in (data cells) ─────>┌───────────────┐
//!                         │ credit_sender │──> out (one cell per cell cycle at most)
//!   credits (credit cells)>└───────────────┘
//! ```
//!
//! - Cell cycles are the line rate's slots (`phy` or `rate`): slot k begins at
//!   `k · 424 / rate` (the kernel's exact cell instants). The clock runs only while the
//!   linecard has something to do; a cell arriving between slots waits for the next.
//! - A cell leaves on `out` at the start of its slot; put a `link` of the same rate after
//!   the sender for the transmission and the propagation.
//! - Data cells of a VC not listed in `vcs` are dropped (cause `credit_unknown_vc`).
//! - A credit cell is consumed here; with `--check-wire` it is round-tripped through the
//!   byte-exact format first (the credit cell's 53 octets, or with `carrier = "header"`
//!   the header that carries the entry). Any other cell arriving on `credits` passes on
//!   at once on `rx`: the upstream chip watches every cell arriving on the node's
//!   receive side and takes out only the credit VCs (evans96), so the reverse traffic
//!   of the hop (TCP acknowledgements) and its credits can share one link. A run whose
//!   `credits` port receives such a cell with `rx` unconnected stops.

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, PortId, SimTime};

use super::gate::CreditGate;
use super::{CARRIER, CARRIERS};
use crate::cell::{parse_vc_label, vc_name, Cell, Msg};
use crate::drops::Drops;
use crate::kind::{BuildInfo, Cx, Kind, KindInfo, PortDecl, PortSpec, Ports};
use crate::link::transmitter::LineRateParams;
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;
use crate::observe::{observe, Control, Observation};
use atmsim_wire::credit::CreditEntry;

pub const PARAMS: [ParamSpec; 5] = [
    ParamSpec { name: "piggyback", ty: ParamType::Bool, default: Some("false"), required: false, help: "with carrier = \"header\": also take the credit that cells arriving on 'credits' carry in their header (GFC, for their own VC) before passing them on 'rx'; the credit_buffer must set piggyback too", source: "evans96 (the AN2 carries credits in the cell headers); atmsim convention" },
    ParamSpec { name: "phy", ty: ParamType::Choice(&crate::link::transmitter::PHY_NAMES), default: None, required: false, help: "physical-layer preset giving the cell cycle (give phy or rate)", source: "ITU-T I.432, ATM Forum UNI 3.1" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "cell-carrying bit rate (424 bits per cell); give phy or rate", source: "required (phy or rate)" },
    ParamSpec { name: "vcs", ty: ParamType::StrList, default: None, required: true, help: "the credit-controlled VCs this linecard sends on, as VC labels (\"100\" or \"0/100\"); VCI 1 ... 4095 (the credit entry's 12 bits), VPI 0", source: "required" },
    ParamSpec { name: "window", ty: ParamType::Size, default: Some("32 cells"), required: false, help: "credits each VC starts with: the buffer spaces the downstream node holds for it (1 cell or more)", source: "atmsim convention (evans96 gives no window)" },
];

/// With the gate's [`super::gate::PROBES`].
pub const PROBES: [ProbeSpec; 1] = [
    ProbeSpec { name: "credit_piggybacked", unit: "entries", kind: ProbeKind::Counter, help: "piggyback = true: credit entries taken from the headers of cells passing on 'rx' (count)" },
];

pub const INPUTS: [PortSpec; 2] = [PortSpec::cells("in", true), PortSpec::cells("credits", true)];
/// `out`: the data cells sent with credit; `rx`: the cells arriving on `credits` that
/// are not credits (the hop's reverse traffic), passed on unchanged.
pub const OUTPUTS: [PortSpec; 2] = [PortSpec::cells("out", false), PortSpec::cells("rx", false)];

/// The ports: all required but `rx` (a hop without reverse traffic leaves it unused).
fn ports(_p: &Params) -> Ports {
    Ports {
        inputs: INPUTS.iter().map(|i| PortDecl::new(i.name, i.multi, true)).collect(),
        outputs: OUTPUTS.iter().map(|o| PortDecl::new(o.name, false, o.name != "rx")).collect(),
    }
}

/// The `credit_sender` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct CreditSenderParams {
    pub line: LineRateParams,
    pub vcs: Vec<String>,
    pub window: u64,
    /// Credits arrive in cell headers (in-header variant) rather than in credit cells.
    pub in_header: bool,
    /// Credits also ride in the headers of other cells arriving on `credits`.
    pub piggyback: bool,
}

impl CreditSenderParams {
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(CreditSenderParams { line: LineRateParams::bind(p)?, vcs: p.need("vcs", Params::list)?.to_vec(), window: p.need("window", Params::cells)?, in_header: p.need_choice("carrier", &CARRIERS)?, piggyback: p.need("piggyback", Params::bool)? })
    }
    /// The VCIs (VPI 0, VCI 1 ... 4095, each once).
    pub fn vcis(&self) -> Result<Vec<u16>, ParamIssue> {
        if self.vcs.is_empty() {
            return Err(ParamIssue::new("vcs", "no VC given; list at least one VC label such as \"100\""));
        }
        let mut out = Vec::new();
        for v in &self.vcs {
            out.push(credit_vci(v).map_err(|m| ParamIssue::new("vcs", m))?);
        }
        let mut sorted = out.clone();
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
            return Err(ParamIssue::new("vcs", format!("VCI {} listed twice; list each VC once", w[0])));
        }
        Ok(out)
    }
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.line.rate(None)?;
        self.vcis()?;
        if self.window == 0 {
            return Err(ParamIssue::new("window", "0 cells: a VC without credit never sends; give 1 cell or more"));
        }
        if self.piggyback && !self.in_header {
            return Err(ParamIssue::new("piggyback", "true needs carrier = \"header\" (credits ride in cell headers); a credit cell cannot be piggybacked"));
        }
        Ok(())
    }
}

/// The VCI of a credit-controlled VC label: VPI 0, VCI 1 ... 4095 (a credit entry's 12
/// bits).
pub fn credit_vci(label: &str) -> Result<u16, String> {
    let vc = parse_vc_label(label)?;
    let (vpi, vci) = (vc >> 16, vc & 0xffff);
    if vpi != 0 || !(1..=u32::from(atmsim_wire::credit::MAX_VCI)).contains(&vci) {
        return Err(format!("VC {label} cannot be named in a credit entry; give VPI 0 and a VCI from 1 to 4095"));
    }
    Ok(vci as u16)
}

#[derive(Clone, Debug)]
pub struct CreditSender {
    in_header: bool,
    piggyback: bool,
    /// Entries taken from headers of passing cells (piggyback), and at the warm-up.
    piggybacked: u64,
    piggybacked_base: u64,
    gate: CreditGate,
    unknown: Drops,
}

impl CreditSender {
    pub fn new(p: CreditSenderParams) -> Result<CreditSender, ParamIssue> {
        p.validate()?;
        Ok(CreditSender { in_header: p.in_header, piggyback: p.piggyback, piggybacked: 0, piggybacked_base: 0, gate: CreditGate::new(p.line.rate(None)?, &p.vcis()?, p.window), unknown: Drops::new("credit_unknown_vc") })
    }

    fn wake(&mut self, ctx: &mut Cx<'_>) {
        if let Some(at) = self.gate.wake(ctx.now) {
            ctx.schedule_at(at, 0);
        }
    }
}

impl Kind for CreditSender {
    fn build(p: &Params, _b: &BuildInfo) -> Result<Self, ParamIssue> {
        CreditSender::new(CreditSenderParams::bind(p)?)
    }
    fn on_cell(&mut self, port: PortId, mut cell: Cell, ctx: &mut Cx<'_>) {
        if port == 0 {
            if let Err(c) = self.gate.enqueue(cell) {
                self.unknown.drop(&c, ctx);
                return;
            }
        } else {
            let credit = match ctx.store().payloads.get(cell.payload) {
                Some(Payload::Credit(c)) => *c,
                _ => {
                    // Not a credit cell: the hop's reverse traffic, passed on (with
                    // piggyback, after taking the credit its header carries).
                    if self.piggyback && cell.aux != 0 {
                        // The header's GFC credits the cell's own VC (VPI 0).
                        let credit = CreditEntry { vci: (cell.vc & 0xffff) as u16, credit: cell.aux.min(255) as u8 };
                        if !observe(Observation::Control { cell: &cell, control: Control::Piggyback(credit) }, ctx) {
                            return;
                        }
                        cell.aux = 0;
                        self.piggybacked += 1;
                        self.gate.on_entry(credit);
                        ctx.send(1, Msg::Cell(cell));
                        self.wake(ctx);
                        return;
                    }
                    ctx.send(1, Msg::Cell(cell));
                    return;
                }
            };
            ctx.store().payloads.take(cell.payload);
            if self.in_header && (credit.len() != 1 || cell.vc != credit.entries().next().map_or(0, |e| u32::from(e.vci))) {
                return ctx.fail(format!("credit_sender (carrier = \"header\"): a credit on {} (flow {}) with {} entries is not one header entry for its own VC; the downstream credit_buffer must use carrier = \"header\" too", vc_name(cell.vc), cell.flow, credit.len()));
            }
            let control = if self.in_header { Control::CreditHeader(&credit) } else { Control::CreditCell(&credit) };
            if !observe(Observation::Control { cell: &cell, control }, ctx) {
                return;
            }
            self.gate.on_credit(cell.flow, credit.entries());
        }
        self.wake(ctx);
    }
    fn on_timer(&mut self, _tag: u32, ctx: &mut Cx<'_>) {
        let (cell, next) = self.gate.on_slot();
        if let Some(cell) = cell {
            ctx.send(0, Msg::Cell(cell));
        }
        if let Some(at) = next {
            ctx.schedule_at(at, 0);
        }
    }
    fn reset_stats(&mut self, _now: SimTime) {
        self.gate.reset_stats();
        self.piggybacked_base = self.piggybacked;
    }
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        // Piggybacked entries reach the FIFO like a credit cell's but come in no cell of
        // their own.
        let piggybacked = self.piggybacked - self.piggybacked_base;
        self.gate.report(path, piggybacked, out);
        if self.piggyback {
            out.push(path, "credit_piggybacked", "count", piggybacked as f64, "entries");
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        self.gate.ledger(l);
        self.unknown.ledger(l);
    }
}

/// The `credit_sender` kind's declarations (registered in `lib.rs`).
pub const KIND: KindInfo = KindInfo {
    kind: "credit_sender",
    help: "upstream node of hop-by-hop credit flow control: per-VC queues, a VC sends only while it holds credit; credit cells (or credit headers, carrier = \"header\") on 'credits' feed an entry FIFO, one entry per cell cycle; other cells arriving on 'credits' pass on 'rx'",
    source: "evans96 (credit flow control, upstream chip; WAN and in-header variants)",
    params: &[&PARAMS, &CARRIER],
    inputs: &INPUTS,
    outputs: &OUTPUTS,
    ports: Some(ports),
    probes: &[&PROBES, &super::gate::PROBES],
    series: &[],
    is_source: false,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};
