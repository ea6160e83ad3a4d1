//! Building a scenario into a kernel simulation and running one replication.

use std::time::Instant;

use atmsim_kernel::{Ledger, ProbeRow, Route, SeriesProbe, SimError, SimTime, Simulation};
use atmsim_models::observers::capture::Capture;
use atmsim_models::observers::cell_trace::{CellTrace, TraceFilter, TraceRow};
use atmsim_models::observers::wire_check::WireCheck;
use atmsim_models::{BuildInfo, Model};

use crate::load::Scenario;

/// One flow (one source's cells) and its books.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowBooks {
    pub flow: u32,
    pub source: String,
    pub vc: u32,
    pub generated: u64,
    pub delivered: u64,
    pub dropped: u64,
    pub in_flight: u64,
    /// Extra copies made by point-to-multipoint switches.
    pub replicated: u64,
}

/// One sampled time series: `values[k]` is at `(k + 1)·interval_s` seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesRow {
    /// `COMPONENT[/SUB]`, as probe rows name parts.
    pub component: String,
    pub probe: &'static str,
    pub unit: &'static str,
    /// `level` (the value at each instant) or `rate` (per second over each interval).
    pub kind: &'static str,
    pub interval_s: f64,
    pub values: Vec<f64>,
}

/// One row of a run's cell trace (`[trace]`), with names resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRowOut {
    pub time_s: f64,
    /// The same instant in picoseconds (exact).
    pub time_ps: u64,
    /// `r`: the cell or frame arrived at the component's input `port`; `-`: its
    /// transmission starts on the line of output `port`; `d`: the component dropped
    /// it (`cause`, the ledger's).
    pub event: &'static str,
    /// The component's name; `NAME/sI` for station I of a component that holds
    /// several (the FDDI ring's stations, named as their probes are).
    pub component: String,
    /// The input (`r`) or output (`-`) port's name, empty for a drop and for a
    /// station's rows.
    pub port: String,
    /// The cause of a drop (`buffer_full`, `no_route`, `epd`, ...), empty otherwise.
    pub cause: &'static str,
    /// `cell` or `frame`.
    pub unit: &'static str,
    /// Its length on the line in octets: 53 for a cell; a frame's length on the
    /// medium, headers and trailers included.
    pub octets: u32,
    /// The cell's VC label there, `VPI/VCI`; empty for a frame.
    pub vc: String,
    /// The source whose cell or frame it is, and the number the source gave it (cell
    /// sources number their cells; hosts and AAL5 trace sources number their PDUs, so
    /// the cells of one PDU share it; a ring's background frames are named by the
    /// station that made them, `RING/sI`, and numbered by it).
    pub source: String,
    pub seq: u32,
    /// Its place in its AAL5 PDU (0 for the first; 0 for cell sources' cells and for
    /// frames): with `source` and `seq` it names one cell.
    pub pdu_cell: u16,
    /// When its source made it.
    pub born_s: f64,
    /// The same instant in picoseconds (exact).
    pub born_ps: u64,
    /// `eop`, `clp`, `efci`, comma-separated (empty for a frame).
    pub flags: String,
    /// What it carries beyond its header, in a few words (empty for most cells); a
    /// frame's starts with the address it is sent to, `dst N` (a station on the ring,
    /// the connection's ICN leaving it toward a gateway).
    pub carries: String,
}

/// Everything one run produces.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub name: String,
    pub seed: u64,
    pub run: u64,
    pub fingerprint: u64,
    pub events: u64,
    /// Events that went through the future-event list ([`atmsim_kernel::RunOutcome::scheduled`]).
    pub scheduled: u64,
    pub wall_s: f64,
    /// Wall seconds of the event loop alone (`wall_s` also counts building the
    /// components and writing the report).
    pub loop_s: f64,
    pub probes: Vec<ProbeRow>,
    pub ledger: Ledger,
    pub flows: Vec<FlowBooks>,
    /// The series asked for in `[probes] series`, in that order.
    pub series: Vec<SeriesRow>,
    /// Warnings about the run's input, one line each (`FILE:LINE: KEY: ...`): a
    /// `[probes] keep` pattern that matched no probe row; a cell trace cut at its limit.
    pub warnings: Vec<String>,
    /// The cell trace asked for in `[trace]`, in time order (empty without one, and
    /// when it was streamed to a file: [`Scenario::run_to`]).
    pub trace: Vec<TraceRowOut>,
    /// Rows of the cell trace (held in `trace` or written to its file).
    pub trace_rows: u64,
}

/// What names a trace row's component, ports and source: the scenario's names, owned
/// (a streamed trace formats its rows during the run).
#[derive(Clone, Debug)]
pub struct TraceNames {
    /// Per component: its name, its input ports' names, its output ports' names.
    comps: Vec<(String, Vec<String>, Vec<String>)>,
    /// Flow → the source component's name.
    sources: std::collections::HashMap<u32, String>,
}

impl TraceNames {
    pub fn new(sc: &Scenario) -> TraceNames {
        let ports = |d: &[atmsim_models::kind::PortDecl]| d.iter().map(|p| p.name.clone()).collect();
        TraceNames {
            comps: sc.components.iter().map(|c| (c.name.clone(), ports(&c.ports.inputs), ports(&c.ports.outputs))).collect(),
            sources: sc.components.iter().filter_map(|c| Some((c.flow?, c.name.clone()))).collect(),
        }
    }

    /// Names for a test: components with one input and one output port (`in`,
    /// `out`), flows 0 … `flows` − 1 from the first components.
    #[cfg(test)]
    pub(crate) fn for_test(comps: &[&str], flows: u32) -> TraceNames {
        TraceNames {
            comps: comps.iter().map(|c| (c.to_string(), vec!["in".to_string()], vec!["out".to_string()])).collect(),
            sources: (0..flows).map(|f| (f, comps[f as usize % comps.len()].to_string())).collect(),
        }
    }

    /// One row with its names.
    pub fn row(&self, r: &TraceRow) -> TraceRowOut {
        use atmsim_models::observe::{Event as TraceEvent, FRAME_NO_PORT};
        use atmsim_models::observers::cell_trace::{flag_names, Traced};
        let (cname, inputs, outputs) = &self.comps[r.comp as usize];
        let name = |names: &[String], p: u16| if p == FRAME_NO_PORT { String::new() } else { names.get(p as usize).map_or_else(|| p.to_string(), |x| x.clone()) };
        let (event, port, cause) = match r.event {
            TraceEvent::Arrive(p) => ("r", name(inputs, p), ""),
            TraceEvent::Depart(p) => ("-", name(outputs, p), ""),
            TraceEvent::Drop(cause) => ("d", String::new(), cause),
        };
        let component = match r.station {
            Some(i) => format!("{cname}/s{i}"),
            None => cname.clone(),
        };
        let source = |flow: u32| self.sources.get(&flow).map_or_else(|| format!("flow {flow}"), |s| s.clone());
        // What differs between a cell's row and a frame's.
        let (unit, octets, vc, source, seq, pdu_cell, born, flags, carries) = match r.what {
            Traced::Cell(cell) => ("cell", 53, format!("{}/{}", cell.vc >> 16, cell.vc & 0xffff), source(cell.flow), cell.seq, cell.pdu_index, cell.born, flag_names(&cell), r.carries.clone()),
            Traced::Frame { frame, origin } => (
                "frame",
                frame.octets,
                String::new(),
                match origin {
                    Some(i) => format!("{}/s{i}", source(frame.flow)),
                    None => source(frame.flow),
                },
                frame.seq,
                0,
                frame.born,
                String::new(),
                if r.carries.is_empty() { format!("dst {}", frame.dst) } else { format!("dst {}: {}", frame.dst, r.carries) },
            ),
        };
        TraceRowOut { time_s: r.time.as_secs_f64(), time_ps: r.time.0, event, component, port, cause, unit, octets, vc, source, seq, pdu_cell, born_s: born.as_secs_f64(), born_ps: born.0, flags, carries }
    }
}

impl Scenario {
    /// Builds the simulation for `(seed, run)`. Construction errors were caught at load
    /// time, so a failure here is a model bug and is reported as one.
    pub fn build(&self, seed: u64, run: u64) -> Result<Simulation<Model>, SimError> {
        let mut comps = Vec::with_capacity(self.components.len());
        let mut paths = Vec::with_capacity(self.components.len());
        let mut routes: Vec<Vec<Option<Route>>> = Vec::with_capacity(self.components.len());
        for c in &self.components {
            let info = BuildInfo { path: &c.name, seed, run, flow: c.flow.unwrap_or(0), end: SimTime::ZERO.plus(self.duration), dir: &self.raw.dir };
            let m = (c.kind.build)(&c.params, &info).map_err(|e| SimError::ModelPanic {
                path: c.name.clone(),
                time: SimTime::ZERO,
                msg: format!("construction failed after validation: {}: {}", e.key, e.msg),
            })?;
            comps.push(m);
            paths.push(c.name.clone());
            routes.push(vec![None; c.ports.outputs.len()]);
        }
        for w in &self.wires {
            routes[w.from][w.out as usize] = Some(Route { comp: w.to as u32, port: w.inp });
        }
        let mut sim = Simulation::new(comps, paths, routes);
        let observers = &mut sim.store_mut().observers;
        if self.check_wire {
            observers.subscribe(Box::new(WireCheck::default()));
        }
        let mut capture = Capture::default();
        for (i, c) in self.components.iter().enumerate() {
            let Some(file) = c.kind.observed.capture else { continue };
            let asked = file(&c.params, run).map_err(|e| SimError::Output(format!("{}: {}: {}", c.name, e.key, e.msg)))?;
            if let Some((path, snaplen)) = asked {
                capture.open(i, &path, snaplen).map_err(|e| SimError::Output(format!("{}: {e}", c.name)))?;
            }
        }
        if !capture.is_empty() {
            observers.subscribe(Box::new(capture));
        }
        if let Some(t) = &self.trace {
            // Transmissions are booked when known, ahead on the fast path: none from
            // the run's end on (the event path never reaches them).
            let end = SimTime::ZERO.plus(self.duration);
            observers.subscribe(Box::new(CellTrace::new(TraceFilter { to: t.filter.to.min(end), ..t.filter.clone() })));
        }
        sim.fingerprint_content(self.fingerprint_content);
        sim.fast_path(self.fast_path);
        sim.deliver_ahead(self.deliver_ahead);
        let probes = self.series.iter().map(|r| SeriesProbe { comp: r.component as u32, index: r.index, kind: r.decl.kind, scale: r.decl.scale }).collect();
        sim.sample_every(self.interval, probes);
        Ok(sim)
    }

    /// Runs replication `run` with master seed `seed`. `progress(now, events)` is called
    /// every 65,536 events; returning false interrupts the run.
    pub fn run(&self, seed: u64, run: u64, progress: &mut dyn FnMut(SimTime, u64) -> bool) -> Result<RunResult, SimError> {
        self.run_to(seed, run, progress, None)
    }

    /// [`Scenario::run`], streaming the cell trace to the CSV file `trace_file` in
    /// bounded memory ([`crate::trace_file`]) instead of holding it in the result;
    /// the scenario must keep a trace (`[trace] cells = true`).
    pub fn run_to(&self, seed: u64, run: u64, progress: &mut dyn FnMut(SimTime, u64) -> bool, trace_file: Option<&std::path::Path>) -> Result<RunResult, SimError> {
        let started = Instant::now();
        let mut sim = self.build(seed, run)?;
        let file = match (trace_file, &self.trace) {
            (None, _) => None,
            (Some(path), None) => return Err(SimError::Output(format!("{}: no cell trace to write: the scenario keeps none ([trace] cells = true)", path.display()))),
            (Some(path), Some(_)) => {
                let f = crate::trace_file::TraceFile::create(path).map_err(SimError::Output)?;
                if let Some(t) = sim.store_mut().observers.get_mut::<CellTrace>() {
                    t.spill_to(crate::trace_file::CHUNK, f.spill(TraceNames::new(self)));
                }
                Some(f)
            }
        };
        let end = SimTime::ZERO.plus(self.duration);
        let warm = SimTime::ZERO.plus(self.warmup);
        let mut out = sim.run(end, warm, progress)?;
        let mut cell_trace = out.store.observers.take::<CellTrace>().unwrap_or_default();
        if let Some(f) = file {
            cell_trace.flush().map_err(SimError::Output)?;
            f.finish().map_err(SimError::Output)?;
        }
        let wall_s = started.elapsed().as_secs_f64();
        let mut probes = out.report.rows;
        let mut flows = Vec::new();
        for c in &self.components {
            let Some(flow) = c.flow else { continue };
            let vc = c.params.int("vc").map(|v| v as u32).unwrap_or(flow + 1);
            let at = |v: &Vec<u64>| v.get(flow as usize).copied().unwrap_or(0);
            let books = FlowBooks {
                flow,
                source: c.name.clone(),
                vc,
                generated: at(&out.ledger.generated),
                delivered: at(&out.ledger.delivered),
                dropped: out.ledger.dropped_of(flow),
                in_flight: at(&out.ledger.in_flight),
                replicated: at(&out.ledger.replicated),
            };
            let loss = if books.generated > 0 { books.dropped as f64 / books.generated as f64 } else { f64::NAN };
            probes.push(ProbeRow { component: c.name.clone(), probe: "flow_loss_ratio", statistic: "value".into(), value: loss, unit: "1" });
            for (stat, v) in [
                ("generated", books.generated),
                ("delivered", books.delivered),
                ("dropped", books.dropped),
                ("in_flight", books.in_flight),
                ("replicated", books.replicated),
            ] {
                probes.push(ProbeRow { component: c.name.clone(), probe: "flow_cells", statistic: stat.to_string(), value: v as f64, unit: "cells" });
            }
            flows.push(books);
        }
        let mut warnings = self.unmatched_keep(&probes);
        let trace = self.trace_rows(&cell_trace);
        let trace_rows = cell_trace.kept();
        if cell_trace.cut > 0 {
            let line = self.raw.trace.iter().find(|e| e.key == "limit").and_then(|e| e.line);
            let at = line.map_or_else(|| self.raw.file.clone(), |l| format!("{}:{l}", self.raw.file));
            warnings.push(format!(
                "{at}: trace.limit: the cell trace stopped at {} rows ({} more were wanted); narrow it (flows, vcs, at, from, to) or raise limit",
                trace_rows,
                cell_trace.cut
            ));
        }
        probes.retain(|r| self.keeps(&r.component, r.probe));
        let interval_s = out.series.interval.as_secs_f64();
        let series = self
            .series
            .iter()
            .zip(out.series.values)
            .map(|(r, values)| SeriesRow { component: r.path.clone(), probe: r.decl.name, unit: r.decl.unit, kind: r.decl.kind.name(), interval_s, values })
            .collect();
        Ok(RunResult { name: self.name.clone(), seed, run, fingerprint: out.fingerprint, events: out.events, scheduled: out.scheduled, wall_s, loop_s: out.loop_s, probes, ledger: out.ledger, flows, series, warnings, trace, trace_rows })
    }

    /// The trace's rows with names, in time order (the kernel tells of deliveries
    /// handed over late after other events: a stable sort by time restores the order
    /// of each instant's rows as recorded).
    fn trace_rows(&self, t: &CellTrace) -> Vec<TraceRowOut> {
        let names = TraceNames::new(self);
        let mut rows: Vec<&TraceRow> = t.rows.iter().collect();
        rows.sort_by_key(|r| r.time);
        rows.into_iter().map(|r| names.row(r)).collect()
    }
}
