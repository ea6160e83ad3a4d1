//! The `credit_buffer` kind: the downstream node of hop-by-hop credit flow control
//! (evans96's WAN variant) — the linecard's cell buffer, served at the line rate, and
//! the credit chip that watches it ([`CreditPacker`]): each cell forwarded out of the
//! buffer frees a space and credits the cell's VC; entries are packed, up to 24 per
//! credit cell, and sent on `credits`.
//!
//! ```text
//!   in (data cells) ──>[ credit_buffer ]──> out (data cells, one per cell cycle)
//!                               └─────────> credits (credit cells on `credit_vc`)
//! ```
//!
//! - Each VC may hold `buffer` cells; a cell arriving for a full VC is dropped (cause
//!   `credit_overflow`) — with the sender's window at most `buffer` this never happens.
//! - The buffer is served first in, first out, one cell per slot of the line rate (slot
//!   k at `k · 424 / rate`); a cell leaves at the start of its slot.
//! - Credit cells are standard user cells (`atmsim_wire::credit`) on the VC `credit_vc`,
//!   so any network carries them; each gets the flow of the data cell whose departure
//!   opened it (the ledger books credit cells as generated here for that flow). One
//!   credit VC per `credit_buffer` (the packer core supports four; one instance
//!   returns credit to one upstream node).
//! - `carrier = "header"` (the in-header variant): each credit entry leaves on its own
//!   cell whose header carries it (VC = the credited VC, `credit_vc` unused), one entry
//!   per cell, gathering up to 16 credits of its VC during `flush_after`.
//! - `piggyback = true` (with `carrier = "header"`, as the AN2 does): cells going
//!   upstream pass through the input `rev` and leave on `credits`; each VC's credit
//!   gathers (up to 15, the GFC's range) and rides in the header of the next such cell
//!   on the same VC label (a bidirectional VCC keeps its VPI/VCI both ways). When no
//!   such cell comes within `flush_after` (the bounded wait), or the entry is full, it
//!   leaves in a credit header of its own ([`PiggybackPacker`]).
//!
//! ```text
//!   rev (cells going upstream) ──>[ GFC := the VC's pending credit ]──> credits
//! ```

use atmsim_kernel::ByFlow;
use std::collections::{BTreeMap, VecDeque};

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, PortId, Rate, SimDuration, SimTime};
use atmsim_wire::credit::CreditCellRepr;

use super::packer::{CreditPacker, PiggybackPacker, ENTRIES_IN_HEADER};
use super::{CARRIER, CARRIERS};
use crate::cell::{book_in_flight, parse_vc_label, Cell, Msg};
use crate::drops::Drops;
use crate::kind::{BuildInfo, Cx, Kind, KindInfo, PortDecl, PortSpec, Ports};
use crate::link::transmitter::LineRateParams;
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;
use crate::timer::Timer;

pub const PARAMS: [ParamSpec; 8] = [
    ParamSpec { name: "piggyback", ty: ParamType::Bool, default: Some("false"), required: false, help: "with carrier = \"header\": credit rides in the GFC of cells going upstream on the same VC (input 'rev' -> output 'credits'), falling back to a credit header of its own after flush_after; the credit_sender must set piggyback too", source: "evans96 (the AN2 carries credits in the cell headers); the piggyback rule and layout are atmsim convention" },
    ParamSpec { name: "phy", ty: ParamType::Choice(&crate::link::transmitter::PHY_NAMES), default: None, required: false, help: "physical-layer preset giving the rate the buffer is served at (give phy or rate)", source: "ITU-T I.432, ATM Forum UNI 3.1" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "cell-carrying bit rate the buffer is served at (424 bits per cell); give phy or rate", source: "required (phy or rate)" },
    ParamSpec { name: "buffer", ty: ParamType::Size, default: Some("32 cells"), required: false, help: "buffer spaces per VC (1 cell or more); cells beyond are dropped as credit_overflow", source: "atmsim convention (evans96 gives no size; equal to credit_sender's default window)" },
    ParamSpec { name: "flush_after", ty: ParamType::Time, default: Some("10 us"), required: false, help: "packing delay: an open credit cell is sent this long after its first entry (0: one credit cell per departing cell); a cell that cannot take another entry goes at once", source: "atmsim convention (evans96 gives no packing rule)" },
    ParamSpec { name: "max_credit", ty: ParamType::Int { min: 1, max: 16 }, default: Some("16"), required: false, help: "largest credit one entry carries, buffer spaces (1 ... 16: the entry's 4-bit field)", source: "evans96 (\"the credit value can credit from 1 to 16 buffer spaces\")" },
    ParamSpec { name: "entries_per_cell", ty: ParamType::Int { min: 1, max: 24 }, default: Some("24"), required: false, help: "credit entries packed into one credit cell (1 ... 24); carrier = \"header\" always carries 1", source: "evans96 (\"a maximum of 24 credit entries can be packaged into a single ATM cell\")" },
    ParamSpec { name: "credit_vc", ty: ParamType::Text, default: Some("0/4095"), required: false, help: "the VC label credit cells are sent on (\"VPI/VCI\", or a VCI alone for VPI 0)", source: "atmsim convention" },
];

pub const PROBES: [ProbeSpec; 5] = [
    ProbeSpec { name: "credit_tx_cells", unit: "cells", kind: ProbeKind::Counter, help: "credit cells sent (count)" },
    ProbeSpec { name: "credit_entries_made", unit: "entries", kind: ProbeKind::Counter, help: "credit entries packed (count)" },
    ProbeSpec { name: "credit_overflow_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells dropped because their VC's buffer was full (count)" },
    ProbeSpec { name: "credit_buffer_max", unit: "cells", kind: ProbeKind::Gauge, help: "largest buffer occupancy, all VCs (value)" },
    ProbeSpec { name: "credit_piggybacked", unit: "entries", kind: ProbeKind::Counter, help: "piggyback = true: credit entries that rode in the header of a cell going upstream (count)" },
];

pub const OUTPUTS: [PortSpec; 2] = [PortSpec::cells("out", false), PortSpec::cells("credits", false)];
/// `in`, and with `piggyback = true` `rev`: cells going upstream, to carry credit.
pub const INPUTS: [PortSpec; 2] = [PortSpec::cells("in", true), PortSpec::cells("rev", true)];

fn ports(p: &Params) -> Ports {
    let piggyback = p.bool("piggyback").unwrap_or(false);
    Ports {
        inputs: INPUTS.iter().take(if piggyback { 2 } else { 1 }).map(|i| PortDecl::new(i.name, i.multi, i.name == "in")).collect(),
        outputs: OUTPUTS.iter().map(|o| PortDecl::new(o.name, false, true)).collect(),
    }
}

const TAG_SLOT: u32 = 0;
const TAG_FLUSH: u32 = 1;

/// The `credit_buffer` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct CreditBufferParams {
    pub line: LineRateParams,
    pub buffer: u64,
    pub flush_after: SimDuration,
    pub credit_vc: String,
    /// Credits in cell headers (in-header variant) rather than in credit cells.
    pub in_header: bool,
    pub max_credit: u8,
    pub entries_per_cell: usize,
    pub piggyback: bool,
}

impl CreditBufferParams {
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(CreditBufferParams { line: LineRateParams::bind(p)?, buffer: p.need("buffer", Params::cells)?, flush_after: p.need("flush_after", Params::time)?, credit_vc: p.need("credit_vc", Params::word)?.to_string(), in_header: p.need_choice("carrier", &CARRIERS)?, max_credit: p.need("max_credit", Params::int)? as u8, entries_per_cell: p.need("entries_per_cell", Params::int)? as usize, piggyback: p.need("piggyback", Params::bool)? })
    }
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.line.rate(None)?;
        if self.buffer == 0 {
            return Err(ParamIssue::new("buffer", "0 cells: give 1 cell or more"));
        }
        if !(1..=16).contains(&self.max_credit) {
            return Err(ParamIssue::new("max_credit", format!("{}: an entry carries 1 to 16 credits", self.max_credit)));
        }
        if !(1..=atmsim_wire::credit::MAX_ENTRIES).contains(&self.entries_per_cell) {
            return Err(ParamIssue::new("entries_per_cell", format!("{}: a credit cell holds 1 to 24 entries", self.entries_per_cell)));
        }
        parse_vc_label(&self.credit_vc).map_err(|m| ParamIssue::new("credit_vc", format!("{m}; give a VC label such as \"4095\" or \"1/32\"")))?;
        if self.piggyback && !self.in_header {
            return Err(ParamIssue::new("piggyback", "true needs carrier = \"header\" (credits ride in cell headers); a credit cell cannot be piggybacked"));
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
pub struct CreditBuffer {
    rate: Rate,
    buffer: u64,
    credit_vc: u32,
    in_header: bool,
    queue: VecDeque<Cell>,
    per_vc: BTreeMap<u16, u64>,
    packer: CreditPacker,
    /// `piggyback = true`: the per-VC entries that wait for a cell going upstream.
    piggy: Option<PiggybackPacker>,
    /// Per VC, the flow of its last departure (books a piggyback fallback header).
    vc_flow: BTreeMap<u16, u32>,
    next_slot: Option<u64>,
    flush: Timer,
    /// The flow credit cells are booked under: the data cell's that opened the cell.
    open_flow: u32,
    overflow: Drops,
    made_by_flow: ByFlow<u64>,
    seq: u32,
    max_len: usize,
    base: (u64, u64, u64, u64),
}

impl CreditBuffer {
    pub fn new(p: CreditBufferParams) -> Result<CreditBuffer, ParamIssue> {
        p.validate()?;
        Ok(CreditBuffer {
            rate: p.line.rate(None)?,
            buffer: p.buffer,
            credit_vc: parse_vc_label(&p.credit_vc).map_err(|m| ParamIssue::new("credit_vc", m))?,
            in_header: p.in_header,
            queue: VecDeque::new(),
            per_vc: BTreeMap::new(),
            packer: CreditPacker::new(1, p.flush_after).with_max_credit(p.max_credit).with_entries_per_cell(if p.in_header { ENTRIES_IN_HEADER } else { p.entries_per_cell }),
            piggy: p.piggyback.then(|| PiggybackPacker::new(p.flush_after, p.max_credit)),
            vc_flow: BTreeMap::new(),
            next_slot: None,
            flush: Timer::default(),
            open_flow: 0,
            overflow: Drops::new("credit_overflow"),
            made_by_flow: ByFlow::new(),
            seq: 0,
            max_len: 0,
            base: (0, 0, 0, 0),
        })
    }

    fn send_credit(&mut self, c: CreditCellRepr, ctx: &mut Cx<'_>) {
        *self.made_by_flow.entry(self.open_flow) += 1;
        // In the header the credited VC is the cell's own (VPI 0: the entry's VCI).
        let vc = if self.in_header { c.entries().next().map_or(self.credit_vc, |e| u32::from(e.vci)) } else { self.credit_vc };
        let id = ctx.store().payloads.insert(Payload::Credit(c));
        let cell = Cell { payload: id, ..Cell::plain(ctx.now, self.open_flow, vc, self.seq) };
        self.seq = self.seq.wrapping_add(1);
        ctx.send(1, Msg::Cell(cell));
    }

    /// A piggyback entry that leaves in a credit header of its own.
    fn send_own_header(&mut self, e: atmsim_wire::credit::CreditEntry, ctx: &mut Cx<'_>) {
        self.open_flow = self.vc_flow.get(&e.vci).copied().unwrap_or(0);
        match CreditCellRepr::new(&[e]) {
            Ok(c) => self.send_credit(c, ctx),
            Err(err) => ctx.fail(format!("credit_buffer: piggyback entry {e:?}: {err}")),
        }
    }

    /// Statistics (cells, entries, piggybacked) of whichever packer runs.
    fn counts(&self) -> (u64, u64, u64) {
        match &self.piggy {
            Some(p) => (p.stats.own_cells, p.stats.own_cells + p.stats.piggybacked, p.stats.piggybacked),
            None => (self.packer.stats.cells, self.packer.stats.entries, 0),
        }
    }

    fn arm_flush(&mut self, ctx: &mut Cx<'_>) {
        let deadline = match &self.piggy {
            Some(p) => p.deadline(),
            None => self.packer.deadline(),
        };
        if let Some(d) = deadline {
            if self.flush.due() != Some(d) {
                self.flush.arm(d, TAG_FLUSH, ctx);
            }
        }
    }
}

impl Kind for CreditBuffer {
    fn build(p: &Params, _b: &BuildInfo) -> Result<Self, ParamIssue> {
        CreditBuffer::new(CreditBufferParams::bind(p)?)
    }
    fn on_cell(&mut self, port: PortId, mut cell: Cell, ctx: &mut Cx<'_>) {
        if port == 1 {
            // A cell going upstream: its header (GFC) takes its VC's pending credit.
            let credit = match self.piggy.as_mut() {
                Some(p) if cell.vc >> 16 == 0 && cell.vc & 0xffff <= u32::from(atmsim_wire::credit::MAX_VCI) => p.on_reverse((cell.vc & 0xffff) as u16).unwrap_or(0),
                _ => 0,
            };
            cell.aux = u16::from(credit);
            ctx.send(1, Msg::Cell(cell));
            self.arm_flush(ctx);
            return;
        }
        let vci = cell.vc & 0xffff;
        if cell.vc >> 16 != 0 || vci == 0 || vci > u32::from(atmsim_wire::credit::MAX_VCI) {
            ctx.fail(format!("credit_buffer: a cell on {} (flow {}) cannot be credited: a credit entry names VPI 0, VCI 1 ... 4095", crate::cell::vc_name(cell.vc), cell.flow));
            return;
        }
        let n = self.per_vc.entry(vci as u16).or_insert(0);
        if *n >= self.buffer {
            self.overflow.drop(&cell, ctx);
            return;
        }
        *n += 1;
        self.queue.push_back(cell);
        self.max_len = self.max_len.max(self.queue.len());
        if self.next_slot.is_none() {
            let k = self.rate.slot_after(ctx.now);
            self.next_slot = Some(k);
            ctx.schedule_at(SimTime(0).plus(self.rate.cell_train_offset(k)), TAG_SLOT);
        }
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        if tag == TAG_FLUSH {
            if self.flush.fire(now) {
                if let Some(p) = self.piggy.as_mut() {
                    for e in p.on_deadline(now) {
                        self.send_own_header(e, ctx);
                    }
                }
                for (_, c) in self.packer.on_deadline(now) {
                    self.send_credit(c, ctx);
                }
                self.arm_flush(ctx);
            }
            return;
        }
        let Some(k) = self.next_slot else { return };
        let Some(cell) = self.queue.pop_front() else {
            self.next_slot = None;
            return;
        };
        let vci = (cell.vc & 0xffff) as u16;
        if let Some(n) = self.per_vc.get_mut(&vci) {
            *n -= 1;
        }
        let was_open = self.packer.pending_credit() > 0;
        let flow = cell.flow;
        if !was_open {
            self.open_flow = flow;
        }
        ctx.send(0, Msg::Cell(cell));
        if let Some(p) = self.piggy.as_mut() {
            self.vc_flow.insert(vci, flow);
            if let Some(e) = p.on_departure(now, vci) {
                self.send_own_header(e, ctx);
            }
        } else if let Some(c) = self.packer.on_departure(now, 0, vci) {
            // The full cell sent to make room (its own flow), or with no packing delay
            // this departure's own cell.
            self.send_credit(c, ctx);
            self.open_flow = flow;
        }
        self.arm_flush(ctx);
        if self.queue.is_empty() {
            self.next_slot = None;
        } else {
            self.next_slot = Some(k + 1);
            ctx.schedule_at(SimTime(0).plus(self.rate.cell_train_offset(k + 1)), TAG_SLOT);
        }
    }
    fn reset_stats(&mut self, _now: SimTime) {
        let (cells, entries, piggybacked) = self.counts();
        self.base = (cells, entries, self.overflow.total(), piggybacked);
        self.max_len = self.queue.len();
    }
    fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
        let (cells, entries, piggybacked) = self.counts();
        out.push(path, "credit_tx_cells", "count", (cells - self.base.0) as f64, "cells");
        out.push(path, "credit_entries_made", "count", (entries - self.base.1) as f64, "entries");
        out.push(path, "credit_overflow_cells", "count", (self.overflow.total() - self.base.2) as f64, "cells");
        out.push(path, "credit_buffer_max", "value", self.max_len as f64, "cells");
        if self.piggy.is_some() {
            out.push(path, "credit_piggybacked", "count", (piggybacked - self.base.3) as f64, "entries");
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        self.queue.iter().for_each(|c| book_in_flight(l, c));
        self.overflow.ledger(l);
        for (f, &n) in self.made_by_flow.iter() {
            l.add_generated(f, n);
        }
    }
}

/// The `credit_buffer` kind's declarations (registered in `lib.rs`).
pub const KIND: KindInfo = KindInfo {
    kind: "credit_buffer",
    help: "downstream node of hop-by-hop credit flow control: a per-VC-limited buffer served at the line rate; as cells leave, credit entries (VCI, 1-16) are packed up to 24 per credit cell and sent on 'credits' (carrier = \"header\": one entry per cell header, the AN2 LAN variant)",
    source: "evans96 (credit flow control, downstream chip; WAN and in-header variants)",
    params: &[&PARAMS, &CARRIER],
    inputs: &INPUTS,
    outputs: &OUTPUTS,
    ports: Some(ports),
    probes: &[&PROBES],
    series: &[],
    is_source: false,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};
