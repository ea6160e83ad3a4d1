//! The `abr_dest` kind: ABR connections' destination end systems (TM 4.0 section
//! 5.10.5, the sans-IO [`AbrDest`], one per VC label arriving) with a sink for the data.
//!
//! ```text
//!   in (data + forward RM cells) ──>[ abr_dest ]──> out (backward RM cells)
//!                                        └── data cells: measured as a `sink` does
//! ```
//!
//! - A data cell's EFCI bit becomes its connection's EFCI state (rule 1); the cell is
//!   then consumed by the embedded [`Sink`] (per-VC delay, throughput; `<dest>/vc<N>`).
//! - A forward RM cell is turned around (rule 2, CI set from the EFCI state): the same
//!   cell, its payload changed in place in the run's store, leaves on `out` at once
//!   with the same VC label and CLP. With the checking mode on (`--check-wire`) the
//!   forward RM cell is round-tripped through the byte-exact format as it arrives.
//! - With `becn = true`, a data cell arriving with EFCI set may make a backward RM cell
//!   of the destination's own (BN = 1, CI = 1, at most 10 per second per connection);
//!   the ledger books it as generated here.
//! - With `line_rate` (and `line_length`), the backward RM cells leave on the
//!   destination's own line ([`Line`]) instead of at once on `out`.


use atmsim_kernel::ByFlow;
use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, PortId, SimTime};

use super::dest::AbrDest;
use crate::cell::{vc_name, Cell, FLAG_CLP, FLAG_EFCI};
use crate::link::line::{Line, LineParams, PARAMS as LINE_PARAMS};
use crate::kind::{BuildInfo, Cx, Kind, KindInfo, IN_MANY, OUT};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;
use crate::series::KindSeries;
use crate::traffic::sink::{self, Sink, SinkParams};
use crate::observe::{observe, Control, Observation};

pub const PARAMS: [ParamSpec; 1] = [ParamSpec {
    name: "becn",
    ty: ParamType::Bool,
    default: Some("false"),
    required: false,
    help: "backward explicit congestion notification: a backward RM cell (BN = 1, CI = 1) of the destination's own when a data cell arrives with EFCI set, at most 10 per second per connection",
    source: "ATM Forum TM 4.0 section 5.10.5 (an option)",
}];

pub const PROBES: [ProbeSpec; 3] = [
    ProbeSpec { name: "abr_turned_cells", unit: "cells", kind: ProbeKind::Counter, help: "forward RM cells turned around per VC (count) — component <dest>/vc<N>" },
    ProbeSpec { name: "abr_ci_cells", unit: "cells", kind: ProbeKind::Counter, help: "backward RM cells sent with CI set from the EFCI state per VC (count)" },
    ProbeSpec { name: "abr_becn_cells", unit: "cells", kind: ProbeKind::Counter, help: "backward RM cells of the destination's own (BECN) per VC (count)" },
];

/// The `abr_dest` kind's parameters, bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AbrDestParams {
    pub becn: bool,
    /// The destination's own line, for the backward RM cells.
    pub line: LineParams,
    /// What it keeps of the cells it receives (the `sink` kind's parameters).
    pub sink: SinkParams,
}

impl AbrDestParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(AbrDestParams { becn: p.need("becn", Params::bool)?, line: LineParams::bind(p)?, sink: SinkParams::bind(p)? })
    }
}

/// The destination's line timer ([`Line::arrive`]).
const TAG_LINE: u32 = 0;

#[derive(Clone, Debug)]
pub struct AbrDestNode {
    becn: bool,
    /// One destination end per VC label arriving, in label order (usually one: a
    /// vector searched from the front, not a map, at every cell).
    ends: Vec<(u32, AbrDest)>,
    sink: Sink,
    /// BECN cells made per flow, whole run (the ledger's generated).
    becn_by_flow: ByFlow<u64>,
    /// The destination's own line (None: backward RM cells leave on 'out' at once).
    line: Option<Line>,
}

impl AbrDestNode {
    pub fn new(p: AbrDestParams) -> AbrDestNode {
        AbrDestNode { becn: p.becn, ends: Vec::new(), sink: Sink::new(p.sink, false), becn_by_flow: ByFlow::new(), line: p.line.line(0, TAG_LINE) }
    }

    fn end(&mut self, vc: u32) -> &mut AbrDest {
        let i = match self.ends.iter().position(|&(v, _)| v >= vc) {
            Some(i) if self.ends[i].0 == vc => i,
            at => {
                let i = at.unwrap_or(self.ends.len());
                self.ends.insert(i, (vc, AbrDest::new(self.becn)));
                i
            }
        };
        &mut self.ends[i].1
    }
}

impl Kind for AbrDestNode {
    fn build(p: &Params, _b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = AbrDestParams::bind(p)?;
        params.line.validate()?;
        params.sink.validate()?;
        Ok(AbrDestNode::new(params))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        if let Some(line) = self.line.as_mut() {
            line.start(ctx);
        }
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        match self.line.as_mut().filter(|_| tag == TAG_LINE) {
            Some(line) => line.arrive(ctx),
            None => ctx.fail(format!("abr_dest: timer {tag} without a line")),
        }
    }
    fn on_cell(&mut self, port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let rm = match ctx.store().payloads.get(cell.payload) {
            Some(&Payload::Rm(rm)) => Some(rm),
            _ => None,
        };
        let Some(rm) = rm else {
            // A data cell (its payload, if any, is released by the sink).
            if let Some(b) = self.end(cell.vc).on_data(now, cell.flags & FLAG_EFCI != 0) {
                let id = ctx.store().payloads.insert(Payload::Rm(b));
                *self.becn_by_flow.entry(cell.flow) += 1;
                Line::send_on(self.line.as_mut(), Cell { payload: id, ..Cell::plain(now, cell.flow, cell.vc, 0) }, ctx);
            }
            self.sink.on_cell(port, cell, ctx);
            return;
        };
        if rm.backward {
            ctx.fail(format!("abr_dest received a backward RM cell on {} (flow {}): only the forward path of a connection may end here", vc_name(cell.vc), cell.flow));
            return;
        }
        if !observe(Observation::Control { cell: &cell, control: Control::Rm(&rm) }, ctx) {
            return;
        }
        let back = self.end(cell.vc).turn_around(&rm);
        if let Some(p) = ctx.store().payloads.get_mut(cell.payload) {
            *p = Payload::Rm(back);
        }
        Line::send_on(self.line.as_mut(), Cell { flags: cell.flags & FLAG_CLP, ..cell }, ctx);
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.sink.reset_stats(now);
        self.ends.iter_mut().for_each(|(_, d)| d.reset_stats());
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        self.sink.report(now, path, out);
        for &(vc, ref d) in &self.ends {
            let name = format!("{path}/{}", vc_name(vc));
            out.push(&name, "abr_turned_cells", "count", d.stats.turned as f64, "cells");
            out.push(&name, "abr_ci_cells", "count", d.stats.ci_set as f64, "cells");
            out.push(&name, "abr_becn_cells", "count", d.stats.becn as f64, "cells");
        }
    }
    fn ledger(&self, l: &mut Ledger) {
        self.sink.ledger(l);
        if let Some(line) = &self.line {
            line.ledger(l);
        }
        for (f, &n) in self.becn_by_flow.iter() {
            l.add_generated(f, n);
        }
    }
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        self.sink.series_index(sub, name)
    }
    fn sample(&self, index: u64) -> f64 {
        self.sink.sample(index)
    }
}

/// The `abr_dest` kind's declarations (registered in `lib.rs`).
pub const KIND: KindInfo = KindInfo {
    kind: "abr_dest",
    help: "ABR destination end system: turns forward RM cells around onto 'out' (CI from the last data cell's EFCI, optional BECN) and measures data cells like a sink",
    source: "ATM Forum TM 4.0 (af-tm-0056.000) section 5.10.5",
    params: &[&PARAMS, &LINE_PARAMS, &sink::PARAMS],
    inputs: &IN_MANY,
    outputs: &OUT,
    ports: None,
    probes: &[&sink::PROBES, &PROBES],
    series: &[KindSeries { at: "", series: &sink::SERIES }, KindSeries { at: "vc<N>", series: &sink::SERIES }],
    is_source: false,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// One end per VC label, found again at each cell and reported in label order
    /// whatever order the labels first arrive in.
    #[test]
    fn one_end_per_vc_kept_in_label_order() {
        let line = LineParams { rate: None, length: 0.0 };
        let mut d = AbrDestNode::new(AbrDestParams { becn: false, line, sink: SinkParams { delay_digits: None } });
        for vc in [7, 3, 5, 3, 7, 9, 1] {
            d.end(vc).stats.turned += u64::from(vc);
        }
        let got: Vec<(u32, u64)> = d.ends.iter().map(|(vc, e)| (*vc, e.stats.turned)).collect();
        assert_eq!(got, vec![(1, 1), (3, 6), (5, 5), (7, 14), (9, 9)]);
    }
}
