//! Hop-by-hop credit flow control inside the switch (evans96's WAN variant): both ends
//! of a credit-controlled hop as switch ports, built from the same sans-IO parts as the
//! stand-alone kinds `credit_sender` and `credit_buffer`
//! ([`crate::control::credit`]).
//!
//! ```text
//!   upstream end, output pJ (credit_out = ["pJ = W"]):
//!     cells for pJ ──> [ CreditGate: per-VC queues, W credits each ] ──> pJ's buffer ──> pJ
//!     credit cells arriving on input pJ ──> entry FIFO (one entry per cell cycle)
//!
//!   downstream end, input pI (credit_in = ["pI"]):
//!     cells from pI ──> ... ──> any output buffer ──> leave ──> CreditPacker(pI)
//!     credit cells (credit_vc, ≤ 24 entries) ──> output pI ──> back to the upstream node
//! ```
//!
//! - Upstream: every VC the table sends out of pJ (VPI 0, VCI 1 … 4095, the credit
//!   entry's 12 bits) but `credit_vc` waits in the gate until it holds credit; the gate
//!   runs on pJ's cell clock and hands one cell per slot to pJ's output buffer. Cells
//!   waiting for credit are held to `vc_capacity` per VC (per-VC queueing) or
//!   `capacity` (FIFO); a cell beyond is dropped at pJ as `buffer_full`. A cell arriving
//!   on input pJ whose payload is a credit cell is taken out (whatever its VC: the
//!   upstream chip recognises the credit VCs) and feeds the gate.
//! - Downstream: a cell that arrived on pI frees one space of the switch's buffer when it
//!   leaves its output port (not when it crosses the fabric: the buffer is the output
//!   buffer); its VC's credit goes into pI's packer, and credit cells leave on output pI
//!   (no processing delay: the chip injects them at the linecard), on `credit_vc`, like
//!   any cell of that port. With the upstream's window at most `vc_capacity` the switch
//!   never drops a cell of pI.
//! - Credit cells the switch makes never wait for credit; VCs labelled `credit_vc` are
//!   neither gated nor credited (credit cells of another hop tunnelled through).

use atmsim_kernel::ByFlow;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, Rate, SimDuration, SimTime};
use atmsim_wire::credit::CreditCellRepr;

use crate::cell::{parse_vc_label, vc_name, Cell};
use crate::control::credit::{CreditGate, CreditPacker};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;

pub const PARAMS: [ParamSpec; 4] = [
    ParamSpec { name: "credit_out", ty: ParamType::StrList, default: None, required: false, help: "output ports that send only with credit (the upstream end of a credit-controlled hop): \"pN = WINDOW\" (cells, e.g. \"p3 = 256 cells\"): every VC leaving pN but credit_vc starts with WINDOW credits (the downstream node's buffer for it) and takes credit entries from credit cells arriving on input pN; VCs on pN need VPI 0, VCI 1 ... 4095", source: "evans96 (credit flow control, upstream chip and linecard); the window is atmsim convention" },
    ParamSpec { name: "credit_in", ty: ParamType::StrList, default: None, required: false, help: "input ports whose upstream node sends only with credit (the downstream end): \"pN\"; each cell that arrived on pN credits its VC when it leaves the switch, and credit cells (up to 24 entries of VCI and 1-16 credits) go back on output pN on credit_vc; VCs arriving on pN need VPI 0, VCI 1 ... 4095", source: "evans96 (credit flow control, downstream chip)" },
    ParamSpec { name: "credit_vc", ty: ParamType::Text, default: Some("0/4095"), required: false, help: "VC label of the credit cells the switch sends (credit_in) and of credit VCs passing through, which are neither gated nor credited", source: "atmsim convention (as credit_buffer)" },
    ParamSpec { name: "credit_flush_after", ty: ParamType::Time, default: Some("10 us"), required: false, help: "packing delay of credit_in ports: an open credit cell leaves this long after its first entry (0: one credit cell per departing cell)", source: "atmsim convention (evans96 gives no packing rule; as credit_buffer's flush_after)" },
];

pub const PROBES: [ProbeSpec; 2] = [
    ProbeSpec { name: "credit_tx_cells", unit: "cells", kind: ProbeKind::Counter, help: "credit_in: credit cells sent back on the port (component <sw>/pI)" },
    ProbeSpec { name: "credit_entries_made", unit: "entries", kind: ProbeKind::Counter, help: "credit_in: credit entries packed (component <sw>/pI)" },
];

/// The parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct CreditParams {
    pub credit_out: Option<Vec<String>>,
    pub credit_in: Option<Vec<String>>,
    pub credit_vc: String,
    pub flush_after: SimDuration,
}

impl CreditParams {
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(CreditParams { credit_out: p.opt_list("credit_out")?, credit_in: p.opt_list("credit_in")?, credit_vc: p.need("credit_vc", Params::word)?.to_string(), flush_after: p.need("credit_flush_after", Params::time)? })
    }

    pub fn any(&self) -> bool {
        self.credit_out.as_ref().is_some_and(|v| !v.is_empty()) || self.credit_in.as_ref().is_some_and(|v| !v.is_empty())
    }

    /// The input ports named by `credit_in` (indices), checked against `ports`.
    pub fn in_ports(&self, ports: usize) -> Result<Vec<usize>, ParamIssue> {
        let mut out = Vec::new();
        for e in self.credit_in.iter().flatten() {
            let p = port_index(e.trim().trim_matches('"'), ports).map_err(|m| ParamIssue::new("credit_in", format!("'{e}': {m}")))?;
            if out.contains(&p) {
                return Err(ParamIssue::new("credit_in", format!("p{} listed twice; list each port once", p + 1)));
            }
            out.push(p);
        }
        Ok(out)
    }
}

fn port_index(s: &str, ports: usize) -> Result<usize, String> {
    let port: usize = s.strip_prefix('p').and_then(|x| x.parse().ok()).ok_or_else(|| format!("'{s}' is not a port name like p2"))?;
    if port == 0 || port > ports {
        return Err(format!("port p{port} does not exist (ports are p1 … p{ports})"));
    }
    Ok(port - 1)
}

/// A credit-controlled VC label: VPI 0 and VCI 1 … 4095.
fn credit_vci(vc: u32) -> Option<u16> {
    (vc >> 16 == 0 && (1..=u32::from(atmsim_wire::credit::MAX_VCI)).contains(&(vc & 0xffff))).then_some((vc & 0xffff) as u16)
}

/// What the credit parameters come to against the table.
#[derive(Clone, Debug)]
pub struct CreditPlan {
    /// Per output port: its gate's window and VCIs.
    pub gates: Vec<Option<(u64, Vec<u16>)>>,
    /// Per output port, per output-side VC index: the credit a departure returns,
    /// (credit_in port, VCI as it arrived), if any.
    pub back: Vec<Vec<Option<(u16, u16)>>>,
    /// Per input port: it is a credit_in port (its packer's output-side index of
    /// credit_vc on the same output port).
    pub ins: Vec<Option<u16>>,
    pub vc: u32,
    pub flush_after: SimDuration,
}

impl CreditPlan {
    /// Works the plan out; `out_labels` gains `credit_vc` on every credit_in port.
    /// `routes`: per route its branches (output port, label, output-side index);
    /// `route_labels`: per route (input port, label).
    pub fn new(p: &CreditParams, ports: usize, out_labels: &mut [Vec<u32>], routes: &[Vec<(u16, u32, u16)>], route_labels: &[(u16, u32)]) -> Result<CreditPlan, ParamIssue> {
        let vc = parse_vc_label(&p.credit_vc).map_err(|m| ParamIssue::new("credit_vc", format!("{m}; give a VC label such as \"4095\" or \"1/32\"")))?;
        let mut gates = vec![None; ports];
        for e in p.credit_out.iter().flatten() {
            let bad = |m: String| ParamIssue::new("credit_out", format!("'{e}': {m}"));
            let (port, w) = e.split_once('=').ok_or_else(|| bad("is not \"pN = WINDOW\" (e.g. \"p3 = 256 cells\")".into()))?;
            let j = port_index(port.trim(), ports).map_err(bad)?;
            let w = w.trim().trim_matches('"');
            let window = match atmsim_kernel::units::parse_quantity(w, atmsim_kernel::units::Dimension::Size) {
                Ok(atmsim_kernel::units::Quantity::Size(atmsim_kernel::units::Size::Cells(c))) if c >= 1.0 => c.floor() as u64,
                _ => match w.parse::<u64>() {
                    Ok(n) if n >= 1 => n,
                    _ => return Err(bad(format!("'{w}' is not a window of 1 cell or more (e.g. \"256 cells\")"))),
                },
            };
            if gates[j].is_some() {
                return Err(bad(format!("p{} listed twice; list each port once", j + 1)));
            }
            let mut vcis = Vec::new();
            for &l in out_labels[j].iter().filter(|&&l| l != vc) {
                vcis.push(credit_vci(l).ok_or_else(|| bad(format!("{} leaves p{} and cannot be named in a credit entry; credit-controlled VCs need VPI 0 and a VCI from 1 to 4095", vc_name(l), j + 1)))?);
            }
            gates[j] = Some((window, vcis));
        }
        let mut ins: Vec<Option<u16>> = vec![None; ports];
        for i in p.in_ports(ports)? {
            let labels = &mut out_labels[i];
            let aux = match labels.iter().position(|&l| l == vc) {
                Some(a) => a,
                None => {
                    labels.push(vc);
                    labels.len() - 1
                }
            };
            ins[i] = Some(u16::try_from(aux).map_err(|_| ParamIssue::new("credit_in", "more than 65,536 VCs on one output port"))?);
        }
        let mut back: Vec<Vec<Option<(u16, u16)>>> = out_labels.iter().map(|l| vec![None; l.len()]).collect();
        for (branches, &(ip, in_vc)) in routes.iter().zip(route_labels) {
            if ins[ip as usize].is_none() || in_vc == vc {
                continue;
            }
            let at = format!("p{}:{}", ip + 1, vc_name(in_vc));
            let vci = credit_vci(in_vc).ok_or_else(|| ParamIssue::new("credit_in", format!("{at} arrives on a credit_in port and cannot be named in a credit entry; give it VPI 0 and a VCI from 1 to 4095")))?;
            let [(o, _, aux)] = branches.as_slice() else {
                return Err(ParamIssue::new("credit_in", format!("{at} has {} branches: a cell of a credit-controlled VC frees one buffer space, so it needs exactly one", branches.len())));
            };
            let slot = &mut back[*o as usize][*aux as usize];
            if slot.is_some() {
                return Err(ParamIssue::new("credit_in", format!("{at} merges with another credit-controlled VC on p{}: a departure must credit one VC", o + 1)));
            }
            *slot = Some((ip, vci));
        }
        Ok(CreditPlan { gates, back, ins, vc, flush_after: p.flush_after })
    }
}

/// One gated output port: the gate and what bounds the cells waiting in it.
#[derive(Clone, Debug)]
pub struct Gated {
    pub gate: CreditGate,
    per_vc: Option<usize>,
    total: Option<usize>,
}

impl Gated {
    /// Whether a cell of `vc` finds room among the cells waiting for credit.
    pub fn has_room(&self, vc: u32) -> bool {
        let vci = (vc & 0xffff) as u16;
        self.per_vc.is_none_or(|c| self.gate.queued(vci) < c) && self.total.is_none_or(|c| self.gate.queued_total() < c)
    }
}

/// One credit_in port's packer and its counters.
#[derive(Clone, Debug)]
struct Returner {
    packer: CreditPacker,
    /// Output-side index of credit_vc on the port.
    aux: u16,
    /// The flow credit cells are booked under: the data cell's that opened the cell.
    open_flow: u32,
    base: (u64, u64),
}

/// The switch's credit state: gates per credit_out port, packers per credit_in port.
#[derive(Clone, Debug)]
pub struct SwitchCredit {
    pub gates: Vec<Option<Gated>>,
    back: Vec<Vec<Option<(u16, u16)>>>,
    returners: Vec<Option<Returner>>,
    pub vc: u32,
    made_by_flow: ByFlow<u64>,
    seq: u32,
    /// Departures read from the transmitters (scratch).
    pub departed: Vec<(u16, u32)>,
    /// The packers' flush timer ([`TAG_FLUSH`]).
    pub flush: crate::timer::Timer,
}

/// Timer tags: the gate of output port j at `TAG_GATE + j`, the packers' flush timer at
/// [`TAG_FLUSH`] (transmitters use 1 … 2·4096 + 1, the fabric `u32::MAX`).
pub const TAG_GATE: u32 = 1 << 30;
pub const TAG_FLUSH: u32 = u32::MAX - 1;

impl SwitchCredit {
    pub fn new(plan: CreditPlan, rates: &[Rate], per_vc: Option<usize>, total: Option<usize>) -> SwitchCredit {
        let gates = plan.gates.into_iter().enumerate().map(|(j, g)| g.map(|(w, vcis)| Gated { gate: CreditGate::new(rates[j], &vcis, w), per_vc, total })).collect();
        let returners = plan.ins.into_iter().map(|a| a.map(|aux| Returner { packer: CreditPacker::new(1, plan.flush_after), aux, open_flow: 0, base: (0, 0) })).collect();
        SwitchCredit { gates, back: plan.back, returners, vc: plan.vc, made_by_flow: ByFlow::new(), seq: 0, departed: Vec::new(), flush: crate::timer::Timer::default() }
    }

    /// A cell of output-side index `aux` and `flow` left output `o` at `now`: the
    /// credit cell to send back and the port to send it on, if one is due.
    pub fn on_departure(&mut self, now: SimTime, o: usize, aux: u16, flow: u32) -> Option<(usize, Cell, CreditCellRepr)> {
        let (ip, vci) = self.back.get(o)?.get(aux as usize).copied().flatten()?;
        let r = self.returners.get_mut(ip as usize)?.as_mut()?;
        if r.packer.pending_credit() == 0 {
            r.open_flow = flow;
        }
        let full = r.packer.on_departure(now, 0, vci)?;
        let booked = r.open_flow;
        // The full cell sent to make room (its own flow), or with no packing delay this
        // departure's own cell; the next cell opens under this departure's flow.
        r.open_flow = flow;
        Some(self.credit_cell(now, ip as usize, booked, full))
    }

    /// The credit cells due at `now` (flush), each with its port.
    pub fn on_flush(&mut self, now: SimTime) -> Vec<(usize, Cell, CreditCellRepr)> {
        let mut due = Vec::new();
        for i in 0..self.returners.len() {
            let Some(r) = self.returners[i].as_mut() else { continue };
            let flow = r.open_flow;
            for (_, c) in r.packer.on_deadline(now) {
                due.push((i, flow, c));
            }
        }
        due.into_iter().map(|(i, flow, c)| self.credit_cell(now, i, flow, c)).collect()
    }

    /// The earliest packing deadline of any port.
    pub fn deadline(&self) -> Option<SimTime> {
        self.returners.iter().flatten().filter_map(|r| r.packer.deadline()).min()
    }

    /// A credit cell for port `i` (its payload is inserted by the caller).
    fn credit_cell(&mut self, now: SimTime, i: usize, flow: u32, c: CreditCellRepr) -> (usize, Cell, CreditCellRepr) {
        *self.made_by_flow.entry(flow) += 1;
        let aux = self.returners[i].as_ref().map_or(0, |r| r.aux);
        let cell = Cell { aux, ..Cell::plain(now, flow, self.vc, self.seq) };
        self.seq = self.seq.wrapping_add(1);
        (i, cell, c)
    }

    /// Whether output `j`'s input is a credit_out port (credit cells arrive there).
    pub fn takes_credit(&self, j: usize) -> bool {
        self.gates.get(j).is_some_and(Option::is_some)
    }

    pub fn is_return_port(&self, j: usize) -> bool {
        self.returners.get(j).is_some_and(Option::is_some)
    }

    pub fn reset_stats(&mut self) {
        self.gates.iter_mut().flatten().for_each(|g| g.gate.reset_stats());
        for r in self.returners.iter_mut().flatten() {
            r.base = (r.packer.stats.cells, r.packer.stats.entries);
        }
    }

    pub fn report(&self, path: &str, out: &mut Report) {
        for (j, g) in self.gates.iter().enumerate() {
            if let Some(g) = g {
                g.gate.report(&format!("{path}/p{}", j + 1), 0, out);
            }
        }
        for (i, r) in self.returners.iter().enumerate() {
            if let Some(r) = r {
                let name = format!("{path}/p{}", i + 1);
                out.push(&name, "credit_tx_cells", "count", (r.packer.stats.cells - r.base.0) as f64, "cells");
                out.push(&name, "credit_entries_made", "count", (r.packer.stats.entries - r.base.1) as f64, "entries");
            }
        }
    }

    pub fn ledger(&self, l: &mut Ledger) {
        self.gates.iter().flatten().for_each(|g| g.gate.ledger(l));
        for (f, &n) in self.made_by_flow.iter() {
            l.add_generated(f, n);
        }
    }
}

/// Credit entries of the credit cell `cell` carries, if it is one.
pub fn credit_of(cell: &Cell, store: &crate::payload::Payloads) -> Option<CreditCellRepr> {
    if !cell.payload.is_some() {
        return None;
    }
    match store.get(cell.payload) {
        Some(Payload::Credit(c)) => Some(*c),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(out: &[&str], ins: &[&str], flush_us: u64) -> CreditParams {
        CreditParams {
            credit_out: (!out.is_empty()).then(|| out.iter().map(|s| s.to_string()).collect()),
            credit_in: (!ins.is_empty()).then(|| ins.iter().map(|s| s.to_string()).collect()),
            credit_vc: "0/4095".into(),
            flush_after: SimDuration(flush_us * 1_000_000),
        }
    }

    /// Two ports: p1:100 -> p2:100, p1:101 -> p2:101, p2:200 -> p1:200.
    fn table() -> (Vec<Vec<u32>>, Vec<Vec<(u16, u32, u16)>>, Vec<(u16, u32)>) {
        let out_labels = vec![vec![200], vec![100, 101]];
        let routes = vec![vec![(1, 100, 0)], vec![(1, 101, 1)], vec![(0, 200, 0)]];
        let route_labels = vec![(0, 100), (0, 101), (1, 200)];
        (out_labels, routes, route_labels)
    }

    #[test]
    fn the_plan_gates_every_vc_of_a_credit_out_port_and_credits_each_route_of_a_credit_in_port() {
        let (mut labels, routes, rl) = table();
        let plan = CreditPlan::new(&params(&["p2 = 64 cells"], &["p1"], 10), 2, &mut labels, &routes, &rl).unwrap();
        assert_eq!(plan.gates, vec![None, Some((64, vec![100, 101]))]);
        assert_eq!(labels[0], vec![200, 4095], "credit_vc joins p1's labels (index 1)");
        assert_eq!(plan.ins, vec![Some(1), None]);
        assert_eq!(plan.back[1], vec![Some((0, 100)), Some((0, 101))], "a departure on p2 credits the VC it arrived on at p1");
        assert_eq!(plan.back[0], vec![None, None], "p2's cells and credit cells return nothing");
    }

    #[test]
    fn the_plan_refuses_what_a_credit_entry_cannot_name() {
        let (mut labels, mut routes, mut rl) = table();
        labels[1][1] = 5000;
        let e = CreditPlan::new(&params(&["p2 = 64 cells"], &[], 0), 2, &mut labels, &routes, &rl).unwrap_err();
        assert!(e.key == "credit_out" && e.msg.contains("vc5000") && e.msg.contains("VCI from 1 to 4095"), "{e:?}");
        let (mut labels, _, _) = table();
        rl[1] = (0, 70000);
        let e = CreditPlan::new(&params(&[], &["p1"], 0), 2, &mut labels, &routes, &rl).unwrap_err();
        assert!(e.key == "credit_in" && e.msg.contains("VCI from 1 to 4095"), "{e:?}");
        let (mut labels, _, rl) = table();
        routes[0].push((0, 100, 0));
        let e = CreditPlan::new(&params(&[], &["p1"], 0), 2, &mut labels, &routes, &rl).unwrap_err();
        assert!(e.msg.contains("exactly one"), "{e:?}");
        for (out, ins, want) in [(&["p2 = 0 cells"][..], &[][..], "1 cell or more"), (&["p3 = 4"][..], &[][..], "does not exist"), (&["p2"][..], &[][..], "pN = WINDOW"), (&[][..], &["p1", "p1"][..], "listed twice")] {
            let (mut labels, routes, rl) = table();
            let e = CreditPlan::new(&params(out, ins, 0), 2, &mut labels, &routes, &rl).unwrap_err();
            assert!(e.msg.contains(want), "{out:?} {ins:?}: {e:?}");
        }
    }

    /// Departures event by event: each credits the VC at its credit_in port; the first
    /// entry opens a credit cell under the departing cell's flow and starts the packing
    /// delay; a second VC adds an entry; the deadline sends the cell on p1 with its
    /// two entries.
    #[test]
    fn departures_return_credit_packed_and_flushed_on_the_credit_in_port() {
        let (mut labels, routes, rl) = table();
        let plan = CreditPlan::new(&params(&[], &["p1"], 10), 2, &mut labels, &routes, &rl).unwrap();
        let oc3 = Rate::from_bps(149.76e6).unwrap();
        let mut c = SwitchCredit::new(plan, &[oc3, oc3], Some(256), None);
        let t = |us: f64| SimTime((us * 1e6) as u64);
        assert!(c.is_return_port(0) && !c.is_return_port(1) && !c.takes_credit(0));
        assert!(c.on_departure(t(1.0), 1, 0, 7).is_none(), "VC 100's credit waits in the open cell");
        assert_eq!(c.deadline(), Some(t(11.0)));
        assert!(c.on_departure(t(2.0), 1, 0, 8).is_none(), "the same entry: 2 credits");
        assert!(c.on_departure(t(3.0), 1, 1, 9).is_none(), "VC 101: a second entry");
        assert!(c.on_departure(t(4.0), 0, 0, 9).is_none(), "p1's own cells return nothing");
        assert!(c.on_flush(t(10.0)).is_empty(), "not due yet");
        let sent = c.on_flush(t(11.0));
        let [(port, cell, repr)] = sent.as_slice() else { panic!("one credit cell: {sent:?}") };
        assert_eq!((*port, cell.vc, cell.aux, cell.flow), (0, 4095, 1, 7), "on p1, credit_vc, booked under the flow that opened it");
        let entries: Vec<_> = repr.entries().map(|e| (e.vci, e.credit)).collect();
        assert_eq!(entries, vec![(100, 2), (101, 1)]);
        assert_eq!(c.deadline(), None);
        let mut l = Ledger::default();
        c.ledger(&mut l);
        assert_eq!(l.generated.get(7).copied(), Some(1), "the credit cell is booked generated");
    }

    /// With no packing delay each departure sends its own credit cell at once.
    #[test]
    fn with_no_packing_delay_each_departure_sends_a_credit_cell() {
        let (mut labels, routes, rl) = table();
        let plan = CreditPlan::new(&params(&[], &["p1"], 0), 2, &mut labels, &routes, &rl).unwrap();
        let oc3 = Rate::from_bps(149.76e6).unwrap();
        let mut c = SwitchCredit::new(plan, &[oc3, oc3], None, None);
        for (k, vc_aux) in [0u16, 1, 0].into_iter().enumerate() {
            let (port, _, repr) = c.on_departure(SimTime(k as u64), 1, vc_aux, 3).unwrap();
            assert_eq!((port, repr.len()), (0, 1));
        }
    }

    /// A gated port holds a VC's waiting cells to the per-VC bound.
    #[test]
    fn a_gated_port_bounds_the_cells_waiting_for_credit() {
        let (mut labels, routes, rl) = table();
        let plan = CreditPlan::new(&params(&["p2 = 1 cells"], &[], 0), 2, &mut labels, &routes, &rl).unwrap();
        let oc3 = Rate::from_bps(149.76e6).unwrap();
        let mut c = SwitchCredit::new(plan, &[oc3, oc3], Some(2), None);
        let g = c.gates[1].as_mut().unwrap();
        for seq in 0..2 {
            assert!(g.has_room(100));
            g.gate.enqueue(Cell::plain(SimTime::ZERO, 0, 100, seq)).unwrap();
        }
        assert!(!g.has_room(100) && g.has_room(101), "VC 100 holds its 2 cells; VC 101 has room");
    }
}
