//! A cell-by-cell trace of a run (the scenario's `[trace]` table, `atmsim run
//! --cell-trace FILE`): every delivery of a cell to a component's input, every start
//! of a cell's transmission on a line, and every cell a component drops with its
//! ledger cause, as rows in time order — what ns-2's trace files give for packets, so
//! that a user can follow one VC through the switches' VC tables, see where its cells
//! wait and where they are lost.
//!
//! An observer ([`crate::observe`]): it subscribes to arrivals, departures and drops of
//! cells and frames, which the models fire where they happen (the kernel's deliveries,
//! in its instrumented loop; the transmitters' starts of transmission, ahead on the
//! fast path, when the cell arrives: the rows are sorted at the end; every drop;
//! the FDDI ring's stations and the ATM–FDDI gateway's frames). A row inside a component
//! that holds several stations (the ring) names the station. Observing changes nothing
//! in the run (same events, same fingerprint: tested). A filter keeps the rows wanted
//! (flows, VC labels, components, a window of time) up to a limit.

use atmsim_kernel::{CompId, SimTime};

use crate::cell::{Cell, Frame, FLAG_CLP, FLAG_EFCI, FLAG_EOP};
use crate::observe::{Event, Interest, Observation, Observer};
use crate::payload::{Payload, Payloads, L4};

/// What a row is about: a cell, or a frame.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Traced {
    Cell(Cell),
    /// A frame; `origin`, for a component whose stations all send under its one flow
    /// (the FDDI ring's background frames), the station that made it (its sequence
    /// numbers are that station's).
    Frame { frame: Frame, origin: Option<u16> },
}

impl Traced {
    fn flow(&self) -> u32 {
        match self {
            Traced::Cell(c) => c.flow,
            Traced::Frame { frame, .. } => frame.flow,
        }
    }
    fn vc(&self) -> Option<u32> {
        match self {
            Traced::Cell(c) => Some(c.vc),
            Traced::Frame { .. } => None,
        }
    }
}

/// One row of the trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRow {
    pub time: SimTime,
    pub comp: CompId,
    /// The station inside the component where it happened (the FDDI ring's stations;
    /// None for a component that is one place).
    pub station: Option<u16>,
    pub event: Event,
    pub what: Traced,
    /// What the cell carries beyond its header, in a few words (`tcp seq 1 ack 0 ...`,
    /// `rm forward ER ... CI 0`); empty for a plain cell and the cells of a PDU before
    /// its last.
    pub carries: String,
}

/// Which rows a trace keeps.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceFilter {
    /// Per flow number, whether its cells are kept (empty: every flow).
    pub flows: Vec<bool>,
    /// VC labels (`(VPI << 16) | VCI`) whose cells are kept wherever they carry them;
    /// with `flows` too, a cell is kept if either matches.
    pub vcs: Vec<u32>,
    /// Per component, whether rows there are kept (empty, and `at_stations` empty:
    /// everywhere).
    pub at: Vec<bool>,
    /// Stations inside a component (the FDDI ring's `RING/sI`) whose rows are kept,
    /// as (component, station), beside the whole components of `at`.
    pub at_stations: Vec<(CompId, u16)>,
    /// Rows at instants in `[from, to)`.
    pub from: SimTime,
    pub to: SimTime,
    /// At most this many rows.
    pub limit: usize,
    /// Whether frames' rows are kept (cells' always are).
    pub frames: bool,
}

impl Default for TraceFilter {
    fn default() -> TraceFilter {
        TraceFilter { flows: Vec::new(), vcs: Vec::new(), at: Vec::new(), at_stations: Vec::new(), from: SimTime::ZERO, to: SimTime(u64::MAX), limit: DEFAULT_LIMIT, frames: true }
    }
}

/// Rows a trace keeps unless its `limit` says otherwise.
pub const DEFAULT_LIMIT: usize = 1_000_000;

impl TraceFilter {
    fn wants(&self, time: SimTime, comp: CompId, station: Option<u16>, what: &Traced) -> bool {
        if time < self.from || time >= self.to {
            return false;
        }
        if !(self.at.is_empty() && self.at_stations.is_empty())
            && !self.at.get(comp as usize).copied().unwrap_or(false)
            && !station.is_some_and(|s| self.at_stations.contains(&(comp, s)))
        {
            return false;
        }
        if !self.frames && matches!(what, Traced::Frame { .. }) {
            return false;
        }
        if self.flows.is_empty() && self.vcs.is_empty() {
            return true;
        }
        self.flows.get(what.flow() as usize).copied().unwrap_or(false) || what.vc().is_some_and(|vc| self.vcs.contains(&vc))
    }
}

/// Where a trace streamed to a file sends its rows: each chunk of at most
/// [`CellTrace::spill_rows`] rows, in booking order, to be sorted and written out
/// (the scenario's writer; [`CellTrace::spill_to`]). An error stops the streaming and
/// is reported at the end of the run; the run itself goes on unchanged.
pub type Spill = Box<dyn FnMut(&mut Vec<TraceRow>) -> Result<(), String> + Send>;

/// The run's trace (subscribed when the scenario asks for one).
#[derive(Default)]
pub struct CellTrace {
    pub filter: TraceFilter,
    /// The rows kept, in booking order (streamed: those not yet handed to the spill).
    pub rows: Vec<TraceRow>,
    /// Rows the filter wanted beyond its limit (not kept).
    pub cut: u64,
    /// Rows already handed to the spill.
    pub spilled: u64,
    /// With a spill: hand the rows over whenever this many are held.
    pub spill_rows: usize,
    spill: Option<Spill>,
    /// The spill's first error (streaming stopped there).
    pub spill_error: Option<String>,
}

impl std::fmt::Debug for CellTrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CellTrace")
            .field("filter", &self.filter)
            .field("rows", &self.rows.len())
            .field("cut", &self.cut)
            .field("spilled", &self.spilled)
            .field("streamed", &self.spill.is_some())
            .finish()
    }
}

impl CellTrace {
    /// A trace keeping what `filter` wants.
    pub fn new(filter: TraceFilter) -> CellTrace {
        CellTrace { filter, ..CellTrace::default() }
    }

    /// Streams the rows: whenever `chunk` rows are held they go to `spill`, so that a
    /// trace of any length holds at most `chunk` rows in memory (issue 44 item 5).
    pub fn spill_to(&mut self, chunk: usize, spill: Spill) {
        self.spill_rows = chunk.max(1);
        self.spill = Some(spill);
    }

    /// Rows kept so far (held and handed over).
    pub fn kept(&self) -> u64 {
        self.spilled + self.rows.len() as u64
    }

    /// Hands the rows held to the spill (at the end of the run, the last of them).
    pub fn flush(&mut self) -> Result<(), String> {
        if let Some(e) = &self.spill_error {
            return Err(e.clone());
        }
        let Some(spill) = self.spill.as_mut() else { return Ok(()) };
        let n = self.rows.len() as u64;
        match spill(&mut self.rows) {
            Ok(()) => {
                self.spilled += n;
                self.rows.clear();
                Ok(())
            }
            Err(e) => {
                self.spill_error = Some(e.clone());
                self.spill = None;
                self.rows.clear();
                Err(e)
            }
        }
    }

    fn push(&mut self, time: SimTime, comp: CompId, station: Option<u16>, event: Event, what: Traced, carries: impl FnOnce() -> String) {
        if !self.filter.wants(time, comp, station, &what) {
            return;
        }
        if self.kept() >= self.filter.limit as u64 {
            self.cut += 1;
            return;
        }
        self.rows.push(TraceRow { time, comp, station, event, what, carries: carries() });
        if self.spill.is_some() && self.rows.len() >= self.spill_rows {
            // An error is kept and reported at the end of the run.
            let _ = self.flush();
        }
    }
}

impl Observer for CellTrace {
    fn interest(&self) -> Interest {
        Interest::ARRIVE | Interest::DEPART | Interest::DROP
    }
    fn observe(&mut self, time: SimTime, comp: CompId, what: &Observation<'_>, payloads: &Payloads) -> Result<(), String> {
        let (event, what, station, payload) = match *what {
            Observation::Cell { event, cell } => (event, Traced::Cell(*cell), None, cell.payload),
            Observation::Frame { event, frame, place } => (event, Traced::Frame { frame: *frame, origin: place.origin }, place.station, frame.payload),
            _ => return Ok(()),
        };
        self.push(time, comp, station, event, what, || carried(payloads.get(payload)));
        Ok(())
    }
}

/// A payload in a few words, for a trace row.
pub fn carried(p: Option<&Payload>) -> String {
    match p {
        None => String::new(),
        Some(Payload::Ip { ip, l4 }) => {
            let what = match l4 {
                L4::Tcp(t) => {
                    let f = t.flags.0;
                    let names: String = [(0x02, 'S'), (0x01, 'F'), (0x04, 'R'), (0x08, 'P'), (0x10, '.')]
                        .iter()
                        .filter(|(b, _)| f & b != 0)
                        .map(|&(_, c)| c)
                        .collect();
                    format!("tcp {}>{} [{names}] seq {} ack {} win {}", t.src_port, t.dst_port, t.seq, t.ack, t.window)
                }
                L4::Echo(e) => format!("icmp echo {} seq {}", if e.reply { "reply" } else { "request" }, e.seq),
                L4::Udp(u) => format!("udp {}>{}", u.src_port, u.dst_port),
                L4::Continuation => "fragment".to_string(),
            };
            format!("ip id {} len {}: {what}", ip.ident, ip.payload_len)
        }
        Some(Payload::Rm(rm)) => format!(
            "rm {} ER {:.0} CCR {:.0} cells/s CI {} NI {}{}",
            if rm.backward { "backward" } else { "forward" },
            rm.er.cells_per_s(),
            rm.ccr.cells_per_s(),
            u8::from(rm.ci),
            u8::from(rm.ni),
            if rm.bn { " BN" } else { "" }
        ),
        Some(Payload::Credit(c)) => format!("credit cell, {} entries", c.entries().len()),
    }
}

/// The flags of a cell as a trace shows them: `eop`, `clp`, `efci`, comma-separated.
pub fn flag_names(cell: &Cell) -> String {
    let mut out = Vec::new();
    for (bit, name) in [(FLAG_EOP, "eop"), (FLAG_CLP, "clp"), (FLAG_EFCI, "efci")] {
        if cell.flags & bit != 0 {
            out.push(name);
        }
    }
    out.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cell::Msg;
    use crate::observe::Store;

    fn cell(flow: u32, vc: u32) -> Cell {
        Cell::plain(SimTime::ZERO, flow, vc, 0)
    }

    fn traced(flow: u32, vc: u32) -> Traced {
        Traced::Cell(cell(flow, vc))
    }

    fn frame(flow: u32) -> Traced {
        Traced::Frame { frame: Frame { born: SimTime::ZERO, flow, octets: 4124, dst: 2, seq: 1, payload: crate::payload::PayloadId::NONE }, origin: None }
    }

    #[test]
    fn the_filter_keeps_flows_or_vcs_at_the_components_in_the_window() {
        let f = TraceFilter { flows: vec![false, true], vcs: vec![92], at: vec![true, false, true], at_stations: Vec::new(), from: SimTime(10), to: SimTime(20), limit: 10, frames: true };
        assert!(f.wants(SimTime(10), 0, None, &traced(1, 5)));
        assert!(f.wants(SimTime(19), 2, None, &traced(0, 92)), "the VC matches though the flow does not");
        assert!(!f.wants(SimTime(19), 2, None, &traced(0, 93)), "neither flow nor VC");
        assert!(!f.wants(SimTime(20), 0, None, &traced(1, 5)), "the window is half open");
        assert!(!f.wants(SimTime(9), 0, None, &traced(1, 5)));
        assert!(!f.wants(SimTime(15), 1, None, &traced(1, 5)), "not at this component");
        assert!(!f.wants(SimTime(15), 7, None, &traced(1, 5)), "a component beyond the list is not kept");
        let all = TraceFilter::default();
        assert!(all.wants(SimTime(0), 3, None, &traced(9, 1)));
        assert!(all.wants(SimTime(0), 3, None, &frame(9)), "frames are kept by default");
        assert!(f.wants(SimTime(10), 0, None, &frame(1)), "a frame of a kept flow");
        assert!(!f.wants(SimTime(10), 0, None, &frame(0)), "a frame has no VC label to match");
        let stations = TraceFilter { at_stations: vec![(4, 2)], ..TraceFilter::default() };
        assert!(stations.wants(SimTime(0), 4, Some(2), &frame(9)), "the station named");
        assert!(!stations.wants(SimTime(0), 4, Some(1), &frame(9)), "another station of the component");
        assert!(!stations.wants(SimTime(0), 4, None, &frame(9)), "the component's own rows");
        assert!(!stations.wants(SimTime(0), 3, None, &traced(9, 1)), "another component");
        let both = TraceFilter { at: vec![false, true], ..stations };
        assert!(both.wants(SimTime(0), 1, None, &traced(9, 1)) && both.wants(SimTime(0), 4, Some(2), &frame(9)));
        let no_frames = TraceFilter { frames: false, ..TraceFilter::default() };
        assert!(!no_frames.wants(SimTime(0), 3, None, &frame(9)));
        assert!(no_frames.wants(SimTime(0), 3, None, &traced(9, 1)));
    }

    /// A run's store with `trace` subscribed.
    fn traced_store(trace: CellTrace) -> Store {
        let mut s = Store::default();
        s.observers.subscribe(Box::new(trace));
        s
    }

    fn trace(s: &mut Store) -> &mut CellTrace {
        s.observers.get_mut::<CellTrace>().expect("a trace is subscribed")
    }

    fn dropped(time: SimTime, comp: CompId, cause: &'static str, cell: &Cell, s: &mut Store) {
        s.observe(time, comp, Observation::Cell { event: Event::Drop(cause), cell });
    }

    #[test]
    fn rows_beyond_the_limit_are_counted_not_kept() {
        let mut store = traced_store(CellTrace::new(TraceFilter { limit: 2, ..TraceFilter::default() }));
        for k in 0..5 {
            store.arrived(SimTime(k), 0, 1, &Msg::Cell(cell(0, 1)));
        }
        dropped(SimTime(6), 0, "buffer_full", &cell(0, 1), &mut store);
        let t = trace(&mut store);
        assert_eq!(t.rows.len(), 2);
        assert_eq!(t.cut, 4);
        assert_eq!(t.rows[1].time, SimTime(1));
        assert_eq!(t.rows[1].event, Event::Arrive(1));
    }

    #[test]
    fn a_streamed_trace_holds_at_most_a_chunk_and_hands_over_every_row() {
        use std::sync::{Arc, Mutex};
        let got: Arc<Mutex<Vec<(usize, SimTime)>>> = Arc::default();
        let sink = Arc::clone(&got);
        let mut t = CellTrace::new(TraceFilter { limit: 7, ..TraceFilter::default() });
        let mut chunks = 0;
        t.spill_to(3, Box::new(move |rows: &mut Vec<TraceRow>| {
            chunks += 1;
            sink.lock().map_err(|e| e.to_string())?.extend(rows.iter().map(|r| (chunks, r.time)));
            Ok(())
        }));
        let mut store = traced_store(t);
        for k in 0..10 {
            store.arrived(SimTime(k), 0, 1, &Msg::Cell(cell(0, 1)));
            assert!(trace(&mut store).rows.len() < 3, "never more than a chunk held");
        }
        let t = trace(&mut store);
        assert_eq!((t.kept(), t.cut), (7, 3), "the limit counts the rows handed over");
        t.flush().unwrap();
        let got = got.lock().unwrap().clone();
        let want: Vec<(usize, SimTime)> = (0..7).map(|k| (k as usize / 3 + 1, SimTime(k))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_spill_error_stops_the_streaming_and_is_reported() {
        let mut t = CellTrace::new(TraceFilter::default());
        t.spill_to(2, Box::new(|_: &mut Vec<TraceRow>| Err("disk full".to_string())));
        let mut store = traced_store(t);
        for k in 0..5 {
            store.arrived(SimTime(k), 0, 1, &Msg::Cell(cell(0, 1)));
        }
        assert_eq!(trace(&mut store).flush(), Err("disk full".to_string()));
    }

    #[test]
    fn a_drop_is_a_row_with_its_cause_and_the_cells_flags() {
        let mut store = traced_store(CellTrace::new(TraceFilter::default()));
        let mut c = cell(0, 7);
        c.flags = FLAG_EOP | FLAG_EFCI;
        dropped(SimTime(1), 3, "no_route", &c, &mut store);
        let t = trace(&mut store);
        assert_eq!(t.rows[0].event, Event::Drop("no_route"));
        assert_eq!(t.rows[0].comp, 3);
        let Traced::Cell(kept) = t.rows[0].what else { panic!("a cell's row holds a cell") };
        assert_eq!(flag_names(&kept), "eop,efci");
    }

    #[test]
    fn a_frame_delivered_is_a_row_with_its_frame() {
        let Traced::Frame { frame: f, .. } = frame(4) else { unreachable!() };
        let mut store = traced_store(CellTrace::new(TraceFilter::default()));
        store.arrived(SimTime(3), 2, 0, &Msg::Frame(f));
        trace(&mut store).filter.frames = false;
        store.arrived(SimTime(4), 2, 0, &Msg::Frame(f));
        let t = trace(&mut store);
        assert_eq!(t.rows.len(), 1, "frames: false keeps no frame's row");
        let r = &t.rows[0];
        assert_eq!((r.time, r.comp, r.station, r.event), (SimTime(3), 2, None, Event::Arrive(0)));
        assert_eq!(r.what, Traced::Frame { frame: f, origin: None });
    }
}
