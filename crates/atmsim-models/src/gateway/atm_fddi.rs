//! The `atm_fddi_gateway` kind: buddhikot92's two-port ATM–FDDI gateway (sections 2
//! and 5, Figures 2, 4, 9–11) as one component.
//!
//! ```text
//!  atm_in (cells) ─► AIC ─► SPP: 5 tables, reassembly ─► read requests ─► MPP handshake
//!                            buffer (2 frames/conn)       NPE rate R      (held while the
//!                            cell loss when full                          transmit buffer is full)
//!                                       ─► Drop Frame? ─► ICXT ─► header ─► fddi_tx (frames)
//!  fddi_done (frames: the ring's notice that the MAC sent one) ─► a transmit buffer place free
//!  fddi_rx (frames) ─► receive buffer (16 frames) ─► ICXT ─► SPP segmentation ─► atm_out (cells)
//! ```
//!
//! The FDDI MAC drains the transmit buffer: the gateway owns its occupancy (at most
//! `tx_buffer_frames` frames written and not yet sent) and the `fddi_ring` (with
//! `gateway_notice = true`) sends a notice on `gw_done` each time its gateway station
//! has sent one of the gateway's frames. Cells become frames here, so the ledger
//! books cells written into a frame as delivered (consumed by the gateway) and the
//! frame as generated under the gateway's own flow; the reverse path books frames
//! consumed and cells generated the same way.

use atmsim_kernel::ByFlow;
use std::collections::VecDeque;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, Tally, TimeAverage};
use atmsim_kernel::units::Size;
use atmsim_kernel::{Ledger, PortId, Rate, SimDuration, SimTime, CELL_BITS};

use super::mpp::{InError, Mpp, Step};
use super::spp::{CellFate, Request, Spp};
use super::wucs_sar::{cells_for, SarCell, Segmenter, FLAG_FIRST, PAYLOAD_OCTETS};
use crate::cell::{Cell, Frame, Msg, FLAG_EOP};
use crate::observe::{observe, Event, FramePlace, Observation};
use crate::kind::{BuildInfo, Cx, Kind, KindInfo, PortSpec};
use crate::lan::fddi::mac::{FRAME_OVERHEAD_OCTETS, MAX_INFO_OCTETS};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::PayloadId;

pub const PARAMS: [ParamSpec; 14] = [
    ParamSpec { name: "connections", ty: ParamType::StrList, default: None, required: true, help: "ICXT: \"VC: ICN -> STATION\" per active connection (cells on VC are reassembled into frames of connection ICN for FDDI station STATION; frames received for ICN leave on VC)", source: "buddhikot92 section 2 (MCHIP ICN tables); Table 2: 8 active connections" },
    ParamSpec { name: "segment_cells", ty: ParamType::Int { min: 1, max: 65_535 }, default: Some("85"), required: false, help: "negotiated MCHIP segment size, cells (the start sequence number table steps by it)", source: "buddhikot92 Table 3 (frame size assembled: 85 ATM cells)" },
    ParamSpec { name: "max_frame", ty: ParamType::Size, default: Some("4096 B"), required: false, help: "maximum FDDI frame (information field), bytes: one reassembly queue holds ⌈max_frame/45⌉ cells", source: "buddhikot92 Table 2" },
    ParamSpec { name: "reassembly_frames", ty: ParamType::Int { min: 1, max: 64 }, default: Some("2"), required: false, help: "reassembly queues per connection, each of one maximum-size frame", source: "buddhikot92 section 2 and Table 3 (2 maximum-size frames per connection)" },
    ParamSpec { name: "tx_buffer_frames", ty: ParamType::Int { min: 0, max: 100_000 }, default: Some("16"), required: false, help: "transmit buffer, maximum-size frames (the paper: 16, 32, 68)", source: "buddhikot92 Table 3, section 6.4" },
    ParamSpec { name: "rx_buffer_frames", ty: ParamType::Int { min: 0, max: 100_000 }, default: Some("16"), required: false, help: "receive buffer (reverse path), frames", source: "buddhikot92 section 6.5" },
    ParamSpec { name: "npe_rate", ty: ParamType::Float { min: 0.0, max: 1e9 }, default: Some("100"), required: false, help: "NPE rate R, read requests per µs (one request per segment; it also stands for the frame copy)", source: "buddhikot92 section 6.3 (25 to 100 requests/µs; the rate of the other experiments is not given: atmsim convention, the fastest)" },
    ParamSpec { name: "npe_in_error", ty: ParamType::Choice(&["serve", "skip"]), default: Some("serve"), required: false, help: "a segment marked InError: \"serve\" = the NPE serves its read request before Drop Frame? (FIFO turn, service time, held while the transmit buffer is full); \"skip\" = the MPP drops it on its frame status and acknowledges it at once (only transmit buffer writes are NPE requests)", source: "buddhikot92 section 5: the NPE is \"a processing delay, placed in SPP-MPP acknowledgment path\" and Drop Frame? discards the MCHIP segment read after the acknowledgement (serve); sections 6.3 and 7's \"segment write requests\" give skip, the band's other edge: docs/models/gateway.md" },
    ParamSpec { name: "spp_empty_in_error", ty: ParamType::Choice(&["hold", "free"]), default: Some("hold"), required: false, help: "a segment in error that wrote no cell into the queue it took (its first cells found no idle queue, the rest was discarded): \"hold\" = the queue goes busy and its read request passes the NPE before the MPP drops the frame; \"free\" = an empty queue is idle, no read request (a lost frame)", source: "buddhikot92 section 5: the Frame Status table's frame \"in error\" with \"missing cells\" forwarded to the MPP (hold) vs the Queue Status table's \"idle if it is empty\" (free); the text does not say which applies to an empty one: docs/models/gateway.md" },
    ParamSpec { name: "clock", ty: ParamType::Time, default: Some("25 ns"), required: false, help: "clock cycle of the SPP/MPP hardware", source: "buddhikot92 Table 2" },
    ParamSpec { name: "mpp_cycles", ty: ParamType::Int { min: 0, max: 1_000_000 }, default: Some("4"), required: false, help: "forward MPP work per segment after the NPE: Drop Frame?, ICXT lookup, FDDI frame fields, header build, clock cycles", source: "atmsim convention (one cycle per block of Figure 11; the paper gives no counts)" },
    ParamSpec { name: "rev_cycles", ty: ParamType::Int { min: 0, max: 1_000_000 }, default: Some("1"), required: false, help: "reverse MPP work per frame: ICXT lookup to the ATM header, clock cycles", source: "atmsim convention (the paper gives no count)" },
    ParamSpec { name: "atm_rate", ty: ParamType::Rate, default: Some("155.52 Mb/s"), required: false, help: "ATM link rate the reverse path segments onto (one 53-octet cell per cell time)", source: "buddhikot92 section 5 (155 Mb/s link)" },
    ParamSpec { name: "seq_modulus", ty: ParamType::Int { min: 2, max: 4_294_967_295 }, default: Some("65536"), required: false, help: "WUCS SAR sequence numbers count modulo this", source: "atmsim convention (the paper gives no width; wucs_sar::DEFAULT_SEQ_MODULUS)" },
];

pub const PROBES: [ProbeSpec; 17] = [
    ProbeSpec { name: "gw_offered_load", unit: "Mb/s", kind: ProbeKind::Gauge, help: "ATM cells arriving at the AIC, 53-octet cells (value)" },
    ProbeSpec { name: "gw_throughput", unit: "Mb/s", kind: ProbeKind::Gauge, help: "gateway throughput (carried load): MCHIP segment data (45 octets per cell) of frames the FDDI MAC has sent from the transmit buffer (value)" },
    ProbeSpec { name: "spp_cell_loss", unit: "1", kind: ProbeKind::Gauge, help: "cell loss probability in the SPP: cells dropped because the reassembly buffer had no room / cells arrived (value)" },
    ProbeSpec { name: "spp_discarded_cells", unit: "cells", kind: ProbeKind::Counter, help: "cells discarded because their segment was already in error (count)" },
    ProbeSpec { name: "mpp_frame_loss", unit: "1", kind: ProbeKind::Gauge, help: "frame loss probability in the MPP: segments closed in error (not completely reassembled) / segments closed (value)" },
    ProbeSpec { name: "gw_latency", unit: "s", kind: ProbeKind::Tally, help: "latency of completely assembled frames: arrival of the first constituent cell to the end of the frame's transmission by the FDDI MAC (count, mean, std, min, max)" },
    ProbeSpec { name: "mpp_held_requests", unit: "requests", kind: ProbeKind::Counter, help: "read requests whose acknowledgement was held because the transmit buffer was full (count)" },
    ProbeSpec { name: "gw_tx_frames", unit: "frames", kind: ProbeKind::Counter, help: "frames written to the transmit buffer (count)" },
    ProbeSpec { name: "gw_tx_occupancy_max", unit: "frames", kind: ProbeKind::Gauge, help: "largest transmit buffer occupancy (value)" },
    ProbeSpec { name: "gw_tx_level", unit: "frames", kind: ProbeKind::TimeAverage, help: "transmit buffer occupancy, frames written or being written and not yet sent (statistics mean: time average since warm-up, max)" },
    ProbeSpec { name: "gw_tx_full", unit: "1", kind: ProbeKind::TimeAverage, help: "fraction of time the transmit buffer is full, so read acknowledgements are held (statistics mean: time average since warm-up)" },
    ProbeSpec { name: "gw_tx_empty", unit: "1", kind: ProbeKind::TimeAverage, help: "fraction of time the transmit buffer is empty, so the gateway's MAC has nothing to send (statistics mean: time average since warm-up)" },
    ProbeSpec { name: "rev_rx_frames", unit: "frames", kind: ProbeKind::Counter, help: "reverse path: frames received from FDDI (count)" },
    ProbeSpec { name: "rev_rx_drops", unit: "frames", kind: ProbeKind::Counter, help: "reverse path: frames dropped at a full receive buffer or with an unknown ICN (count)" },
    ProbeSpec { name: "rev_cells", unit: "cells", kind: ProbeKind::Counter, help: "reverse path: cells sent on atm_out (count)" },
    ProbeSpec { name: "rev_throughput", unit: "Mb/s", kind: ProbeKind::Gauge, help: "reverse path carried load: information field of the frames taken from the receive buffer and segmented onto ATM (value)" },
    ProbeSpec { name: "rev_frame_loss", unit: "1", kind: ProbeKind::Gauge, help: "reverse path: frames dropped (full receive buffer or unknown ICN) / frames received from FDDI (value)" },
];

const TAG_NPE: u32 = 0;
const TAG_REV: u32 = 1;
const IN_ATM: PortId = 0;
const IN_FDDI: PortId = 1;
const OUT_FDDI: PortId = 0;
const OUT_ATM: PortId = 1;

/// One ICXT entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conn {
    pub vc: u32,
    pub icn: u32,
    pub station: u32,
}

/// The `atm_fddi_gateway` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct GatewayParams {
    pub connections: Vec<String>,
    pub segment_cells: u32,
    pub max_frame: Size,
    pub reassembly_frames: u32,
    pub tx_buffer_frames: u32,
    pub rx_buffer_frames: u32,
    pub npe_rate: f64,
    pub npe_in_error: InError,
    /// A segment in error with no cell in its queue frees the queue (true) or holds it.
    pub spp_free_empty: bool,
    pub clock: SimDuration,
    pub mpp_cycles: u64,
    pub rev_cycles: u64,
    pub atm_rate: Rate,
    pub seq_modulus: u32,
}

impl GatewayParams {
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(GatewayParams {
            connections: p.need("connections", Params::list)?.to_vec(),
            segment_cells: p.need("segment_cells", Params::int)? as u32,
            max_frame: p.need("max_frame", Params::size)?,
            reassembly_frames: p.need("reassembly_frames", Params::int)? as u32,
            tx_buffer_frames: p.need("tx_buffer_frames", Params::int)? as u32,
            rx_buffer_frames: p.need("rx_buffer_frames", Params::int)? as u32,
            npe_rate: p.need("npe_rate", Params::float)?,
            npe_in_error: p.need_choice("npe_in_error", &[("serve", InError::Serve), ("skip", InError::Skip)])?,
            spp_free_empty: p.need_choice("spp_empty_in_error", &[("hold", false), ("free", true)])?,
            clock: p.need("clock", Params::time)?,
            mpp_cycles: p.need("mpp_cycles", Params::int)? as u64,
            rev_cycles: p.need("rev_cycles", Params::int)? as u64,
            atm_rate: p.need("atm_rate", Params::rate)?,
            seq_modulus: p.need("seq_modulus", Params::int)? as u32,
        })
    }

    /// The ICXT.
    pub fn table(&self) -> Result<Vec<Conn>, ParamIssue> {
        let bad = |e: &str, why: String| ParamIssue::new("connections", format!("'{e}': {why}; valid: \"VC: ICN -> STATION\", e.g. \"1: 1 -> 1\""));
        let mut t: Vec<Conn> = Vec::new();
        for e in &self.connections {
            let (vc, rest) = e.split_once(':').ok_or_else(|| bad(e, "no ':' after the VC".into()))?;
            let (icn, st) = rest.split_once("->").ok_or_else(|| bad(e, "no '->'".into()))?;
            let num = |s: &str, what: &str| s.trim().parse::<u32>().map_err(|_| bad(e, format!("{what} '{}' is not a number", s.trim())));
            let c = Conn { vc: num(vc, "VC")?, icn: num(icn, "ICN")?, station: num(st, "station")? };
            if t.iter().any(|x| x.vc == c.vc) {
                return Err(bad(e, format!("VC {} appears twice", c.vc)));
            }
            if t.iter().any(|x| x.icn == c.icn) {
                return Err(bad(e, format!("ICN {} appears twice", c.icn)));
            }
            t.push(c);
        }
        if t.is_empty() {
            return Err(ParamIssue::new("connections", "no connection; valid: at least one \"VC: ICN -> STATION\""));
        }
        Ok(t)
    }

    /// Cells one reassembly queue holds (one maximum-size frame).
    pub fn queue_cells(&self) -> Result<u32, ParamIssue> {
        let b = match self.max_frame {
            Size::Bytes(b) if b >= 1.0 => b.floor() as u32,
            _ => return Err(ParamIssue::new("max_frame", format!("give a size in bytes from 1 to {MAX_INFO_OCTETS} B (e.g. \"4096 B\")"))),
        };
        if b > MAX_INFO_OCTETS {
            return Err(ParamIssue::new("max_frame", format!("{b} B is longer than an FDDI information field; valid: 1 to {MAX_INFO_OCTETS} B")));
        }
        Ok(cells_for(b))
    }

    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.table()?;
        let q = self.queue_cells()?;
        if self.segment_cells > q {
            return Err(ParamIssue::new("segment_cells", format!("{} cells do not fit in a maximum-size frame (max_frame holds {q} cells of 45 B); valid: 1 to {q}", self.segment_cells)));
        }
        if self.npe_rate.is_nan() || self.npe_rate <= 0.0 {
            return Err(ParamIssue::new("npe_rate", "0 requests/µs: the NPE would never serve a request; valid: a rate > 0 (the paper: 25 to 100)"));
        }
        if self.tx_buffer_frames == 0 {
            return Err(ParamIssue::new("tx_buffer_frames", "0 frames is smaller than one frame; valid: at least 1 (the paper: 16, 32, 68)"));
        }
        if self.rx_buffer_frames == 0 {
            return Err(ParamIssue::new("rx_buffer_frames", "0 frames is smaller than one frame; valid: at least 1 (the paper: 16)"));
        }
        if self.clock.0 == 0 {
            return Err(ParamIssue::new("clock", "0 s; valid: a cycle > 0 (the paper: 25 ns)"));
        }
        if self.atm_rate.bps() <= 0.0 {
            return Err(ParamIssue::new("atm_rate", "0 b/s; valid: a rate > 0 (the paper: 155 Mb/s)"));
        }
        Ok(())
    }
}

fn count(v: &mut ByFlow<u64>, flow: u32, n: u64) {
    *v.entry(flow) += n;
}

/// A frame being segmented onto the ATM link.
#[derive(Clone, Debug)]
struct Rev {
    cells: VecDeque<SarCell>,
    vc: u32,
}

#[derive(Clone, Debug)]
pub struct Gateway {
    p: GatewayParams,
    table: Vec<Conn>,
    flow: u32,
    spp: Spp,
    mpp: Mpp,
    /// Flow of each connection's cells (set by its first cell).
    conn_flow: Vec<u32>,
    npe_time: SimDuration,
    cell_time: SimDuration,
    frame_seq: u32,
    // Reverse path.
    rx: VecDeque<Frame>,
    rev: Option<Rev>,
    segmenters: Vec<Segmenter>,
    // Books.
    generated: u64,
    delivered: ByFlow<u64>,
    dropped: Vec<(&'static str, ByFlow<u64>)>,
    // Statistics (reset at the warm-up).
    since: SimTime,
    arrived: u64,
    lost_full: u64,
    discarded: u64,
    segments: u64,
    segments_in_error: u64,
    carried_octets: u64,
    latency: Tally,
    held: u64,
    tx_written: u64,
    tx_max: u32,
    tx_level: TimeAverage,
    tx_full: TimeAverage,
    tx_empty: TimeAverage,
    rev_rx: u64,
    rev_drops: u64,
    rev_cells: u64,
    rev_info_octets: u64,
}

const D_FULL: usize = 0;
const D_DISCARD: usize = 1;
const D_ERROR: usize = 2;
const D_ROUTE: usize = 3;
const D_RX_FULL: usize = 4;

impl Gateway {
    pub fn new(p: GatewayParams, flow: u32) -> Result<Gateway, ParamIssue> {
        p.validate()?;
        let table = p.table()?;
        let q = p.queue_cells()?;
        let mut spp = Spp::new(table.len(), p.segment_cells, p.reassembly_frames as usize, q, p.seq_modulus);
        spp.free_empty = p.spp_free_empty;
        let npe_ps = (1e6 / p.npe_rate).round() as u64;
        let npe_time = SimDuration(npe_ps + p.mpp_cycles * p.clock.0);
        let cell_time = p.atm_rate.time_for_bits(CELL_BITS);
        Ok(Gateway {
            mpp: Mpp::with(p.tx_buffer_frames, p.npe_in_error),
            conn_flow: vec![u32::MAX; table.len()],
            segmenters: vec![Segmenter::new(p.seq_modulus); table.len()],
            spp,
            table,
            flow,
            npe_time,
            cell_time,
            frame_seq: 0,
            rx: VecDeque::new(),
            rev: None,
            generated: 0,
            delivered: ByFlow::new(),
            dropped: vec![("reassembly_full", ByFlow::new()), ("segment_in_error", ByFlow::new()), ("frame_in_error", ByFlow::new()), ("no_route", ByFlow::new()), ("receive_buffer_full", ByFlow::new())],
            since: SimTime::ZERO,
            arrived: 0,
            lost_full: 0,
            discarded: 0,
            segments: 0,
            segments_in_error: 0,
            carried_octets: 0,
            latency: Tally::default(),
            held: 0,
            tx_written: 0,
            tx_max: 0,
            tx_level: TimeAverage::new(SimTime::ZERO, 0.0),
            tx_full: TimeAverage::new(SimTime::ZERO, 0.0),
            tx_empty: TimeAverage::new(SimTime::ZERO, 1.0),
            rev_rx: 0,
            rev_drops: 0,
            rev_cells: 0,
            rev_info_octets: 0,
            p,
        })
    }

    fn drop(&mut self, cause: usize, flow: u32, n: u64) {
        count(&mut self.dropped[cause].1, flow, n);
    }

    /// Drops a frame under `cause`, booked as `n` units of its flow (its cells for a
    /// segment in error, else 1), with a `d` row in the cell trace if one is kept.
    fn drop_frame(&mut self, cause: usize, f: &Frame, n: u64, ctx: &mut Cx<'_>) {
        self.drop(cause, f.flow, n);
        observe(Observation::Frame { event: Event::Drop(self.dropped[cause].0), frame: f, place: FramePlace::default() }, ctx);
    }

    /// Drops an arriving ATM cell under `cause` (counted for the ledger, a `d` row in
    /// the cell trace if one is kept).
    fn drop_cell(&mut self, cause: usize, cell: &Cell, ctx: &mut Cx<'_>) {
        self.drop(cause, cell.flow, 1);
        crate::drops::dropped_here(self.dropped[cause].0, cell, ctx);
    }

    /// After every change to the MPP: the transmit buffer's level, full and empty time.
    fn step(&mut self, s: Step, ctx: &mut Cx<'_>) {
        let used = self.mpp.tx_used;
        if f64::from(used) != self.tx_level.level() {
            self.tx_level.set(ctx.now, f64::from(used));
            self.tx_full.set(ctx.now, f64::from(u8::from(used >= self.mpp.tx_frames)));
            self.tx_empty.set(ctx.now, f64::from(u8::from(used == 0)));
        }
        match s {
            Step::Serve(_) => ctx.schedule_at(ctx.now.plus(self.npe_time), TAG_NPE),
            Step::Dropped(r) => self.finish(r, ctx),
            Step::Wait => {}
        }
    }

    fn request(&mut self, r: Request, ctx: &mut Cx<'_>) {
        self.segments += 1;
        let s = self.mpp.request(r);
        if s != Step::Dropped(r) && self.mpp.holding() {
            self.held += 1;
        }
        self.step(s, ctx);
    }

    fn on_atm_cell(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        self.arrived += 1;
        let Some(i) = self.table.iter().position(|c| c.vc == cell.vc) else {
            self.drop_cell(D_ROUTE, &cell, ctx);
            return;
        };
        if self.conn_flow[i] == u32::MAX {
            self.conn_flow[i] = cell.flow;
        }
        let sar = SarCell { seq: cell.seq % self.p.seq_modulus, first: cell.flags & FLAG_FIRST != 0, more: cell.flags & FLAG_EOP == 0 };
        let out = self.spp.on_cell(i, sar, ctx.now);
        match out.fate {
            Some(CellFate::BufferFull) => {
                self.lost_full += 1;
                self.drop_cell(D_FULL, &cell, ctx);
            }
            Some(CellFate::Discarded) => {
                self.discarded += 1;
                self.drop_cell(D_DISCARD, &cell, ctx);
            }
            // The SPP keeps the cell's place in its frame; its payload ends here.
            _ => crate::drops::discard(&cell, ctx),
        }
        self.segments += u64::from(out.lost_frames);
        self.segments_in_error += u64::from(out.lost_frames);
        for r in out.requests.into_iter().flatten() {
            self.request(r, ctx);
        }
    }

    fn on_npe_done(&mut self, ctx: &mut Cx<'_>) {
        let (done, next) = self.mpp.served();
        let Some(r) = done else {
            ctx.fail("the NPE finished with no request in service".into());
            return;
        };
        self.finish(r, ctx);
        self.step(next, ctx);
    }

    /// A read request done (by the NPE, or dropped before it): acknowledge it to the
    /// SPP; Drop Frame? drops a segment in error, else the frame is built and written.
    fn finish(&mut self, r: Request, ctx: &mut Cx<'_>) {
        let i = r.conn as usize;
        let flow = self.conn_flow[i];
        // Acknowledgement: the SPP's queue is idle again.
        self.spp.ack(i, r.queue);
        // The frame the segment makes: its cells' information plus the FDDI framing.
        let frame = Frame { born: r.first, flow: self.flow, octets: r.cells * PAYLOAD_OCTETS + FRAME_OVERHEAD_OCTETS, dst: self.table[i].station, seq: 0, payload: PayloadId::NONE };
        if r.in_error {
            self.segments_in_error += 1;
            if r.cells > 0 {
                // It never becomes a frame: its cells are dropped, and its trace row
                // has the frame it would have been (no frame number) under their flow.
                self.drop_frame(D_ERROR, &Frame { flow, ..frame }, u64::from(r.cells), ctx);
            }
        } else {
            count(&mut self.delivered, flow, u64::from(r.cells));
            self.frame_seq = self.frame_seq.wrapping_add(1);
            self.generated += 1;
            self.tx_written += 1;
            self.tx_max = self.tx_max.max(self.mpp.tx_used);
            ctx.send(OUT_FDDI, Msg::Frame(Frame { seq: self.frame_seq, ..frame }));
        }
    }

    /// The ring's notice: the MAC sent one of our frames.
    fn on_sent(&mut self, f: Frame, ctx: &mut Cx<'_>) {
        if f.flow != self.flow {
            return;
        }
        if f.born >= self.since {
            self.latency.add(ctx.now.since(f.born).0 as f64);
        }
        self.carried_octets += u64::from(f.octets.saturating_sub(FRAME_OVERHEAD_OCTETS));
        let s = self.mpp.sent();
        self.step(s, ctx);
    }

    fn on_fddi_frame(&mut self, f: Frame, ctx: &mut Cx<'_>) {
        self.rev_rx += 1;
        let full = self.rx.len() >= self.p.rx_buffer_frames as usize;
        if full {
            self.rev_drops += 1;
            self.drop_frame(D_RX_FULL, &f, 1, ctx);
        }
        if f.payload.is_some() {
            ctx.store().payloads.release(f.payload);
        }
        if full {
            return;
        }
        self.rx.push_back(Frame { payload: PayloadId::NONE, ..f });
        if self.rx.len() == 1 && self.rev.is_none() {
            ctx.schedule_at(ctx.now.plus(SimDuration(self.p.rev_cycles * self.p.clock.0)), TAG_REV);
        }
    }

    /// Reverse path: ICXT lookup done, or a cell time passed.
    fn on_rev(&mut self, ctx: &mut Cx<'_>) {
        if self.rev.is_none() {
            let Some(f) = self.rx.front().copied() else { return };
            let Some(i) = self.table.iter().position(|c| c.icn == f.dst) else {
                self.rx.pop_front();
                self.rev_drops += 1;
                self.drop_frame(D_ROUTE, &f, 1, ctx);
                self.next_rev(ctx);
                return;
            };
            let info = f.octets.saturating_sub(FRAME_OVERHEAD_OCTETS);
            self.rev_info_octets += u64::from(info);
            self.rev = Some(Rev { cells: self.segmenters[i].segment(info).collect(), vc: self.table[i].vc });
        }
        let Some(rev) = self.rev.as_mut() else { return };
        if let Some(c) = rev.cells.pop_front() {
            let mut flags = 0;
            if c.first {
                flags |= FLAG_FIRST;
            }
            if !c.more {
                flags |= FLAG_EOP;
            }
            let cell = Cell { flags, ..Cell::plain(ctx.now, self.flow, rev.vc, c.seq) };
            self.generated += 1;
            self.rev_cells += 1;
            ctx.send(OUT_ATM, Msg::Cell(cell));
            ctx.schedule_at(ctx.now.plus(self.cell_time), TAG_REV);
            return;
        }
        // The frame's last cell has left: the receive buffer frees its place.
        self.rev = None;
        if let Some(f) = self.rx.pop_front() {
            count(&mut self.delivered, f.flow, 1);
        }
        self.next_rev(ctx);
    }

    fn next_rev(&mut self, ctx: &mut Cx<'_>) {
        if !self.rx.is_empty() {
            ctx.schedule_at(ctx.now.plus(SimDuration(self.p.rev_cycles * self.p.clock.0)), TAG_REV);
        }
    }
}

impl Kind for Gateway {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        Gateway::new(GatewayParams::bind(p)?, b.flow)
    }

    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        match tag {
            TAG_NPE => self.on_npe_done(ctx),
            _ => self.on_rev(ctx),
        }
    }

    fn on_cell(&mut self, port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        debug_assert_eq!(port, IN_ATM);
        self.on_atm_cell(cell, ctx);
    }

    fn on_frame(&mut self, port: PortId, frame: Frame, ctx: &mut Cx<'_>) {
        if port == IN_FDDI {
            self.on_fddi_frame(frame, ctx);
        } else {
            self.on_sent(frame, ctx);
        }
    }

    fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        self.arrived = 0;
        self.lost_full = 0;
        self.discarded = 0;
        self.segments = 0;
        self.segments_in_error = 0;
        self.carried_octets = 0;
        self.latency.reset();
        self.held = 0;
        self.tx_written = 0;
        self.tx_max = self.mpp.tx_used;
        self.tx_level.reset(now);
        self.tx_full.reset(now);
        self.tx_empty.reset(now);
        self.rev_rx = 0;
        self.rev_drops = 0;
        self.rev_cells = 0;
        self.rev_info_octets = 0;
    }

    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        let per_s = |x: f64| if secs > 0.0 { x / secs / 1e6 } else { f64::NAN };
        let ratio = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        out.push(path, "gw_offered_load", "value", per_s(self.arrived as f64 * CELL_BITS as f64), "Mb/s");
        out.push(path, "gw_throughput", "value", per_s(self.carried_octets as f64 * 8.0), "Mb/s");
        out.push(path, "spp_cell_loss", "value", ratio(self.lost_full, self.arrived), "1");
        out.push(path, "spp_discarded_cells", "count", self.discarded as f64, "cells");
        out.push(path, "mpp_frame_loss", "value", ratio(self.segments_in_error, self.segments), "1");
        self.latency.report(out, path, "gw_latency", "s", 1e-12);
        out.push(path, "mpp_held_requests", "count", self.held as f64, "requests");
        out.push(path, "gw_tx_frames", "count", self.tx_written as f64, "frames");
        out.push(path, "gw_tx_occupancy_max", "value", f64::from(self.tx_max), "frames");
        out.push(path, "gw_tx_level", "mean", self.tx_level.mean(now), "frames");
        out.push(path, "gw_tx_level", "max", self.tx_level.max(), "frames");
        out.push(path, "gw_tx_full", "mean", self.tx_full.mean(now), "1");
        out.push(path, "gw_tx_empty", "mean", self.tx_empty.mean(now), "1");
        out.push(path, "rev_rx_frames", "count", self.rev_rx as f64, "frames");
        out.push(path, "rev_rx_drops", "count", self.rev_drops as f64, "frames");
        out.push(path, "rev_cells", "count", self.rev_cells as f64, "cells");
        out.push(path, "rev_throughput", "value", per_s(self.rev_info_octets as f64 * 8.0), "Mb/s");
        out.push(path, "rev_frame_loss", "value", ratio(self.rev_drops, self.rev_rx), "1");
    }

    fn ledger(&self, l: &mut Ledger) {
        l.add_generated(self.flow, self.generated);
        for (f, &n) in self.delivered.iter() {
            l.add_delivered(f, n);
        }
        for (cause, v) in &self.dropped {
            for (f, &n) in v.iter() {
                if n > 0 {
                    l.add_dropped(cause, f, n);
                }
            }
        }
        // Cells in the reassembly queues (in service or not) and frames in the receive buffer.
        for (i, &flow) in self.conn_flow.iter().enumerate() {
            let n = self.spp.held(i);
            if n > 0 {
                l.add_in_flight(flow, n);
            }
        }
        for f in &self.rx {
            l.add_in_flight(f.flow, 1);
        }
    }

    fn source_flow(&self) -> Option<(u32, u32)> {
        Some((self.flow, 0))
    }
}

/// The `atm_fddi_gateway` kind's declarations (registered in `lib.rs`).
pub const KIND: KindInfo = KindInfo {
    kind: "atm_fddi_gateway",
    help: "two-port ATM–FDDI gateway: AIC, SPP (WUCS reassembly, 5 state tables), NPE, MPP (handshake, ICXT, header build), transmit and receive buffers",
    source: "buddhikot92 sections 2 and 5",
    params: &[&PARAMS],
    inputs: &[PortSpec::cells("atm_in", true), PortSpec::frames("fddi_rx", false), PortSpec::frames("fddi_done", false)],
    outputs: &[PortSpec::frames("fddi_tx", false), PortSpec::cells("atm_out", false)],
    ports: None,
    probes: &[&PROBES],
    series: &[],
    is_source: true,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed::NONE,
};
