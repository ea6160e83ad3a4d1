//! A cell-by-cell trace of a run (the scenario's `[trace]` table, `atmsim run
//! --cell-trace FILE`): every delivery of a cell to a component's input, every start
//! of a cell's transmission on a line, and every cell a component drops with its
//! ledger cause, as rows in time order — what ns-2's trace files give for packets, so
//! that a user can follow one VC through the switches' VC tables, see where its cells
//! wait and where they are lost.
//!
//! The kernel tells the run's store of each delivery in its instrumented loop
//! ([`atmsim_kernel::Component::observe`]); transmissions come from the two things that
//! put cells on a line ([`crate::link::transmitter::Transmitter`], the buffer of a
//! `fifo`, `link`, switch port, host adapter or `abr_mux`, and
//! [`crate::link::line::Line`], a sender's own line), each when it knows the instant
//! (on the fast path, when the cell arrives; the rows are sorted at the end); drops
//! from the one way a model drops a cell ([`crate::cell::Drops::drop`] and the buffer
//! policies'). Observing changes nothing in the run (same events, same fingerprint:
//! tested). A filter keeps the rows wanted (flows, VC labels, components, a window of
//! time) up to a limit.
//!
//! Frames are traced the same way ([`Traced::Frame`]): their deliveries to a
//! component's input, and what a frame-based model books itself ([`frame_departs`],
//! [`frame_arrives`], [`frame_dropped`]): the FDDI ring's stations starting a frame's
//! transmission, receiving it, dropping it at a full transmit buffer; the ATM–FDDI
//! gateway's frames dropped in the MPP and on its reverse path. A row inside a
//! component that holds several stations (the ring) names the station.

use atmsim_kernel::{CompId, PortId, SimTime};

use crate::cell::{Cell, Frame, Msg, FLAG_CLP, FLAG_EFCI, FLAG_EOP};
use crate::payload::{Payload, Payloads, L4};

/// What happened to the cell of a row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceEvent {
    /// Delivered to input `port` of the component.
    Arrive(PortId),
    /// Its transmission on the line of output `port` starts (its wait there is over;
    /// its last bit leaves one cell time later, and the next hop receives it after the
    /// line's propagation delay).
    Depart(PortId),
    /// Dropped by the component, booked in the ledger under this cause.
    Drop(&'static str),
}

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
    pub event: TraceEvent,
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

/// The run's trace: off unless the scenario asks for one.
#[derive(Default)]
pub struct CellTrace {
    pub on: bool,
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
            .field("on", &self.on)
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
        CellTrace { on: true, filter, ..CellTrace::default() }
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

    fn push(&mut self, time: SimTime, comp: CompId, station: Option<u16>, event: TraceEvent, what: Traced, carries: impl FnOnce() -> String) {
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

/// Books a delivery of a cell or a frame in the store's trace.
pub fn arrived(time: SimTime, comp: CompId, port: PortId, msg: &Msg, store: &mut Payloads) {
    if !store.trace.on {
        return;
    }
    let what = match msg {
        Msg::Cell(cell) => Traced::Cell(*cell),
        Msg::Frame(frame) => Traced::Frame { frame: *frame, origin: None },
    };
    book(store, time, comp, None, TraceEvent::Arrive(port), what);
}

/// Books `event` of a cell or frame at component `comp` (at `station` inside it) in
/// the store's trace (the filter decides whether it is kept).
fn book(store: &mut Payloads, time: SimTime, comp: CompId, station: Option<u16>, event: TraceEvent, what: Traced) {
    let payload = match what {
        Traced::Cell(c) => c.payload,
        Traced::Frame { frame, .. } => frame.payload,
    };
    // The trace is taken out while the payload is read for the row.
    let mut trace = std::mem::take(&mut store.trace);
    trace.push(time, comp, station, event, what, || carried(store.get(payload)));
    store.trace = trace;
}

/// Books a drop in the store's trace, if one is kept.
#[cold]
pub fn dropped(time: SimTime, comp: CompId, cause: &'static str, cell: &Cell, store: &mut Payloads) {
    if !store.trace.on {
        return;
    }
    book(store, time, comp, None, TraceEvent::Drop(cause), Traced::Cell(*cell));
}

/// Books the start of `cell`'s transmission at `time` on output `port` of the
/// component running `ctx` (the caller knows the trace is on: [`traced`]).
#[cold]
#[inline(never)]
pub fn departs(time: SimTime, port: PortId, cell: &Cell, ctx: &mut crate::kind::Cx<'_>) {
    let id = ctx.id();
    book(ctx.store(), time, id, None, TraceEvent::Depart(port), Traced::Cell(*cell));
}

/// Where inside a component a frame's row happens, and whose frame it is: `station`
/// is where (None: the component is one place), `origin` the station that made it
/// when the component's stations share one flow (None: the frame's flow names it).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FramePlace {
    pub station: Option<u16>,
    pub origin: Option<u16>,
}

/// Books the start of `frame`'s transmission now, at `place` of the component running
/// `ctx` (a station of a ring: no output port, so the row's port is
/// [`FRAME_NO_PORT`], written without a name), if a trace is kept.
#[inline(always)]
pub fn frame_departs(frame: &Frame, place: FramePlace, ctx: &mut crate::kind::Cx<'_>) {
    frame_row(TraceEvent::Depart(FRAME_NO_PORT), frame, place, ctx);
}

/// Books the arrival of `frame`'s last bit now at `place` (a ring's destination
/// station), if a trace is kept.
#[inline(always)]
pub fn frame_arrives(frame: &Frame, place: FramePlace, ctx: &mut crate::kind::Cx<'_>) {
    frame_row(TraceEvent::Arrive(FRAME_NO_PORT), frame, place, ctx);
}

/// Books a frame dropped now at `place` under ledger cause `cause`, if a trace is kept.
#[inline(always)]
pub fn frame_dropped(cause: &'static str, frame: &Frame, place: FramePlace, ctx: &mut crate::kind::Cx<'_>) {
    frame_row(TraceEvent::Drop(cause), frame, place, ctx);
}

/// The port a row inside a component names when it happened at one of its stations,
/// not at a port: written without a port name.
pub const FRAME_NO_PORT: PortId = PortId::MAX;

/// Books a frame's row if a trace is kept: the test inline, the booking out of line.
#[inline(always)]
fn frame_row(event: TraceEvent, frame: &Frame, place: FramePlace, ctx: &mut crate::kind::Cx<'_>) {
    if ctx.store().trace.on {
        book_frame(event, frame, place, ctx);
    }
}

#[cold]
#[inline(never)]
fn book_frame(event: TraceEvent, frame: &Frame, place: FramePlace, ctx: &mut crate::kind::Cx<'_>) {
    let (now, id) = (ctx.now, ctx.id());
    book(ctx.store(), now, id, place.station, event, Traced::Frame { frame: *frame, origin: place.origin });
}

/// Whether the run keeps a cell trace: what a component putting cells on a line reads
/// once, when the run starts, to know whether to book their transmissions
/// ([`departs`]).
pub fn traced(ctx: &mut crate::kind::Cx<'_>) -> bool {
    ctx.store().trace.on
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

    #[test]
    fn rows_beyond_the_limit_are_counted_not_kept() {
        let mut store = Payloads::default();
        store.trace = CellTrace::new(TraceFilter { limit: 2, ..TraceFilter::default() });
        for k in 0..5 {
            arrived(SimTime(k), 0, 1, &Msg::Cell(cell(0, 1)), &mut store);
        }
        dropped(SimTime(6), 0, "buffer_full", &cell(0, 1), &mut store);
        assert_eq!(store.trace.rows.len(), 2);
        assert_eq!(store.trace.cut, 4);
        assert_eq!(store.trace.rows[1].time, SimTime(1));
        assert_eq!(store.trace.rows[1].event, TraceEvent::Arrive(1));
    }

    #[test]
    fn a_streamed_trace_holds_at_most_a_chunk_and_hands_over_every_row() {
        use std::sync::{Arc, Mutex};
        let got: Arc<Mutex<Vec<(usize, SimTime)>>> = Arc::default();
        let sink = Arc::clone(&got);
        let mut store = Payloads::default();
        store.trace = CellTrace::new(TraceFilter { limit: 7, ..TraceFilter::default() });
        let mut chunks = 0;
        store.trace.spill_to(3, Box::new(move |rows: &mut Vec<TraceRow>| {
            chunks += 1;
            sink.lock().map_err(|e| e.to_string())?.extend(rows.iter().map(|r| (chunks, r.time)));
            Ok(())
        }));
        for k in 0..10 {
            arrived(SimTime(k), 0, 1, &Msg::Cell(cell(0, 1)), &mut store);
            assert!(store.trace.rows.len() < 3, "never more than a chunk held");
        }
        assert_eq!((store.trace.kept(), store.trace.cut), (7, 3), "the limit counts the rows handed over");
        store.trace.flush().unwrap();
        let got = got.lock().unwrap().clone();
        let want: Vec<(usize, SimTime)> = (0..7).map(|k| (k as usize / 3 + 1, SimTime(k))).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_spill_error_stops_the_streaming_and_is_reported() {
        let mut store = Payloads::default();
        store.trace = CellTrace::new(TraceFilter::default());
        store.trace.spill_to(2, Box::new(|_: &mut Vec<TraceRow>| Err("disk full".to_string())));
        for k in 0..5 {
            arrived(SimTime(k), 0, 1, &Msg::Cell(cell(0, 1)), &mut store);
        }
        assert_eq!(store.trace.flush(), Err("disk full".to_string()));
    }

    #[test]
    fn a_drop_is_booked_only_when_a_trace_is_kept() {
        let mut store = Payloads::default();
        dropped(SimTime(1), 3, "no_route", &cell(0, 7), &mut store);
        assert!(store.trace.rows.is_empty() && store.trace.cut == 0);
        store.trace = CellTrace::new(TraceFilter::default());
        let mut c = cell(0, 7);
        c.flags = FLAG_EOP | FLAG_EFCI;
        dropped(SimTime(1), 3, "no_route", &c, &mut store);
        assert_eq!(store.trace.rows[0].event, TraceEvent::Drop("no_route"));
        assert_eq!(store.trace.rows[0].comp, 3);
        let Traced::Cell(kept) = store.trace.rows[0].what else { panic!("a cell's row holds a cell") };
        assert_eq!(flag_names(&kept), "eop,efci");
    }

    #[test]
    fn a_frame_delivered_is_a_row_with_its_frame() {
        let mut store = Payloads::default();
        let Traced::Frame { frame: f, .. } = frame(4) else { unreachable!() };
        arrived(SimTime(3), 2, 0, &Msg::Frame(f), &mut store);
        assert!(store.trace.rows.is_empty(), "no trace kept, no row");
        store.trace = CellTrace::new(TraceFilter::default());
        arrived(SimTime(3), 2, 0, &Msg::Frame(f), &mut store);
        store.trace.filter.frames = false;
        arrived(SimTime(4), 2, 0, &Msg::Frame(f), &mut store);
        assert_eq!(store.trace.rows.len(), 1, "frames: false keeps no frame's row");
        let r = &store.trace.rows[0];
        assert_eq!((r.time, r.comp, r.station, r.event), (SimTime(3), 2, None, TraceEvent::Arrive(0)));
        assert_eq!(r.what, Traced::Frame { frame: f, origin: None });
    }
}
