//! The `fddi_ring` kind: a whole FDDI ring as one component — N stations, each with
//! the timed-token MAC of [`super::mac`], a transmit buffer, a traffic generator and an
//! ICN → destination table (buddhikot92 section 5, Figure 12: connection-oriented,
//! asynchronous background traffic of 1 Mb/s per station), and optionally one gateway
//! station whose MAC sends what arrives on the frame port `gw_tx` (the gateway's
//! transmit buffer) and delivers what it receives on the frame port `gw_rx`.
//!
//! ```text
//!            gw_tx (frames) ──►┐                 ┌──► gw_rx (frames)
//!        ┌──────────────────[ s_g  gateway station ]──────────────────┐
//!        │  token, frames ──► s0 ──► s1 ──► … ──► s(N−1) ──► (back)    │
//!        └──── hop i: station_delay + fibre_length/N of fibre ────────┘
//! ```
//!
//! One component simulates the whole ring: the token walks from station to station as
//! timer events of this component (token arrives / a frame's transmission ends), and a
//! frame is delivered at its destination when its last bit gets there (the end of its
//! transmission plus the path through the stations between). The ring latency is
//! `D = N·station_delay + fibre_length · 5 µs/km`. A station that sent frames on a
//! visit then issues a new token (`token_octets`, 11 by ANSI X3.139); one that sent
//! nothing repeats the token with its station delay only. Ring initialisation: the
//! token's first rotation after the claim only starts the stations' TRTs (each at the
//! instant the token passes it, the token leaving station 0 at time 0); the first
//! usable token reaches station 0 at `D`. Stripping, the claim process, beacons and
//! station management are not modelled: the parameters are checked so that the ring
//! never loses its token (`D + N·sync_alloc + one maximum frame + token ≤ TTRT`, the
//! Sevcik–Johnson condition with the asynchronous overrun).
//!
//! Frames: [`Frame::octets`] is the length on the medium, the 28 octets of
//! [`super::mac::FRAME_OVERHEAD_OCTETS`] included. Frames arriving on `gw_tx` carry
//! the destination *station* in [`Frame::dst`] (the gateway's MPP looked the ICN up
//! and built the header); frames leaving on `gw_rx` carry the connection's *ICN* in
//! [`Frame::dst`] (what the gateway's reverse-path ICXT lookup needs). Background
//! frames belong to this component's flow (it is a source); the ledger counts frames
//! for it (generated, delivered inside the ring, dropped, in flight) and the frames of
//! `gw_tx` under their own flows.

use atmsim_kernel::ByFlow;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, Tally};
use atmsim_kernel::units::{parse_quantity, Dimension, Quantity, Size};
use atmsim_kernel::{Ledger, PortId, Rate, SimDuration, SimTime, Stream};

use super::mac::{octets_time, Class, Mac, MacConfig, FRAME_OVERHEAD_OCTETS, MAX_INFO_OCTETS, PRIORITIES};
use crate::cell::{Frame, Msg};
use crate::observe::{observe, Event, FramePlace, Observation, FRAME_NO_PORT};
use crate::kind::{BuildInfo, Cx, Kind, KindInfo, PortDecl, PortSpec, Ports};
use crate::params::{fibre_delay, ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::PayloadId;
use crate::traffic::exp_ps;
use crate::Carries;

pub const PARAMS: [ParamSpec; 18] = [
    ParamSpec { name: "stations", ty: ParamType::Int { min: 2, max: 500 }, default: Some("4"), required: false, help: "stations on the ring, numbered 0 … N−1 (ANSI X3.139 allows up to 500)", source: "buddhikot92 section 6 (a fixed four-node ring)" },
    ParamSpec { name: "ttrt", ty: ParamType::Time, default: Some("50 ms"), required: false, help: "target token rotation time (the negotiated T_Opr)", source: "buddhikot92 Table 2" },
    ParamSpec { name: "station_delay", ty: ParamType::Time, default: Some("1 us"), required: false, help: "latency of one station repeating the ring's symbols", source: "atmsim convention (the paper does not give it; X3.139 leaves it to the implementation)" },
    ParamSpec { name: "fibre_length", ty: ParamType::Length, default: Some("1 km"), required: false, help: "total fibre around the ring, stations evenly spaced (5 µs/km)", source: "atmsim convention (the paper does not give it)" },
    ParamSpec { name: "token_octets", ty: ParamType::Int { min: 0, max: 11 }, default: Some("11"), required: false, help: "length of the token a station issues after sending (0: a token of no length, the analytic models' assumption)", source: "ANSI X3.139 (PA 16 + SD 2 + FC 2 + ED 2 symbols)" },
    ParamSpec { name: "sync_alloc", ty: ParamType::Time, default: Some("0 s"), required: false, help: "synchronous allocation of every station, per token visit", source: "buddhikot92 section 5 (all traffic asynchronous [Katz 1992])" },
    ParamSpec { name: "t_pri", ty: ParamType::StrList, default: None, required: false, help: "asynchronous priority thresholds T_Pri[0] … T_Pri[7] on the unexpired holding time, lowest priority first, e.g. [\"10 ms\", \"8 ms\", ...] (default: all 0 s: every priority may use the whole holding time)", source: "atmsim convention (the paper uses priority 7 only)" },
    ParamSpec { name: "priority", ty: ParamType::Int { min: 0, max: 7 }, default: Some("7"), required: false, help: "asynchronous priority of every station's frames, the gateway's included", source: "buddhikot92 Table 2" },
    ParamSpec { name: "traffic", ty: ParamType::Choice(&["bursty", "constant", "poisson", "saturated", "none"]), default: Some("bursty"), required: false, help: "background traffic of every non-gateway station: on-off bursts of Poisson frames, constant frame spacing, Poisson frames, always a frame waiting, or none", source: "buddhikot92 section 5 (generators modified to send bursty traffic)" },
    ParamSpec { name: "traffic_class", ty: ParamType::Choice(&["asynchronous", "synchronous"]), default: Some("asynchronous"), required: false, help: "class of the background frames", source: "buddhikot92 section 5 (all traffic asynchronous)" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: Some("1 Mb/s"), required: false, help: "mean background rate of every non-gateway station, information-field bits", source: "buddhikot92 section 6.1" },
    ParamSpec { name: "frame_data", ty: ParamType::Size, default: Some("4096 B"), required: false, help: "information field of a background frame, bytes (at most 4,480: 4,500 octets SD … FS)", source: "buddhikot92 Table 2 (maximum FDDI frame size 4096 bytes)" },
    ParamSpec { name: "peak_to_mean", ty: ParamType::Float { min: 1.0, max: 1e6 }, default: Some("2"), required: false, help: "bursty traffic: rate while on / mean rate", source: "atmsim convention (the paper gives the ratio for its ATM sources only, Table 3: 2)" },
    ParamSpec { name: "burst", ty: ParamType::Time, default: Some("10 ms"), required: false, help: "bursty traffic: mean on period (exponential)", source: "atmsim convention (the paper does not give it)" },
    ParamSpec { name: "tx_buffer", ty: ParamType::Size, default: Some("256 KB"), required: false, help: "transmit buffer of every station (the gateway's included), bytes on the medium", source: "buddhikot92 section 7 (SUPERNET's maximum transmit buffer, 256 KB)" },
    ParamSpec { name: "connections", ty: ParamType::StrList, default: None, required: false, help: "ICN tables: \"STATION: ICN -> DEST\" (e.g. \"1: 17 -> 0\"); a station sends round robin over its connections (default: station i sends on ICN i to station i+1)", source: "buddhikot92 section 5 (ICN vs destination table per station)" },
    ParamSpec { name: "gateway", ty: ParamType::Int { min: 0, max: 499 }, default: None, required: false, help: "the gateway station: it sends what arrives on port gw_tx and delivers what it receives on port gw_rx (it has no background generator)", source: "buddhikot92 section 5 (one node is the gateway)" },
    ParamSpec { name: "gateway_notice", ty: ParamType::Bool, default: Some("false"), required: false, help: "with a gateway station: when the gateway station's MAC has sent a frame that came in on gw_tx, a notice (a copy of the frame's metadata, no payload) leaves on the frame port gw_done, so that the gateway knows its transmit buffer has room (the SPP–MPP handshake of the atm_fddi_gateway kind)", source: "buddhikot92 section 5 (the gateway node's MAC modified to reflect the SPP–MPP handshake)" },
];

pub const PROBES: [ProbeSpec; 10] = [
    ProbeSpec { name: "mac_token_rotation", unit: "s", kind: ProbeKind::Tally, help: "time between successive token arrivals, all stations (component <ring>) and per station (<ring>/s<i>) (count, mean, std, min, max)" },
    ProbeSpec { name: "mac_late_tokens", unit: "tokens", kind: ProbeKind::Counter, help: "tokens that arrived late (Late_Ct set) per station (count)" },
    ProbeSpec { name: "mac_tx_frames", unit: "frames", kind: ProbeKind::Counter, help: "frames sent per station (count)" },
    ProbeSpec { name: "mac_tx_rate", unit: "Mb/s", kind: ProbeKind::Gauge, help: "bits sent on the medium per station, overhead octets included (value)" },
    ProbeSpec { name: "mac_rx_frames", unit: "frames", kind: ProbeKind::Counter, help: "frames received per destination station (count)" },
    ProbeSpec { name: "mac_frame_delay", unit: "s", kind: ProbeKind::Tally, help: "frame birth to the arrival of its last bit, per destination station (count, mean, std, min, max)" },
    ProbeSpec { name: "mac_drop_frames", unit: "frames", kind: ProbeKind::Counter, help: "frames dropped at a full transmit buffer per station (count)" },
    ProbeSpec { name: "ring_utilisation", unit: "1", kind: ProbeKind::Gauge, help: "fraction of time the ring carries frames (preamble to frame status), component <ring> (value)" },
    ProbeSpec { name: "ring_frame_balance", unit: "frames", kind: ProbeKind::Gauge, help: "background frames generated − delivered − dropped − in flight, whole run (0 when frames are conserved; frames that left on gw_rx count as delivered there), component <ring> (value)" },
    ProbeSpec { name: "ring_latency", unit: "s", kind: ProbeKind::Gauge, help: "ring latency D: station delays plus fibre (value)" },
];

const TAG_TOKEN: u32 = 0;
const TAG_DELIVER: u32 = 1;
const TAG_GEN: u32 = 2;
/// Queue index of synchronous frames (asynchronous: 0..=7, the priority).
const SYNC_Q: usize = PRIORITIES;

/// Background traffic of a station.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Traffic {
    /// On-off: exponential on periods of mean `burst`, Poisson frames at `peak_to_mean`
    /// times the mean rate while on, exponential off periods that make the mean rate.
    Bursty,
    Constant,
    Poisson,
    /// A frame is always waiting (made when it is sent).
    Saturated,
    None,
}

/// The `fddi_ring` kind's parameters, bound.
#[derive(Clone, Debug, PartialEq)]
pub struct RingParams {
    pub stations: usize,
    pub ttrt: SimDuration,
    pub station_delay: SimDuration,
    /// Metres.
    pub fibre_length: f64,
    pub token_octets: u32,
    pub sync_alloc: SimDuration,
    pub t_pri: Option<Vec<String>>,
    pub priority: u8,
    pub traffic: Traffic,
    pub synchronous: bool,
    pub rate: Rate,
    pub frame_data: Size,
    pub peak_to_mean: f64,
    pub burst: SimDuration,
    pub tx_buffer: Size,
    pub connections: Option<Vec<String>>,
    pub gateway: Option<usize>,
    pub gateway_notice: bool,
}

fn bytes(s: Size, key: &str) -> Result<u64, ParamIssue> {
    match s {
        Size::Bytes(b) if b >= 0.0 => Ok(b.floor() as u64),
        _ => Err(ParamIssue::new(key, "give a size in bytes (e.g. \"4096 B\"), not cells: FDDI frames are octets")),
    }
}

impl RingParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(RingParams {
            stations: p.need("stations", Params::int)? as usize,
            ttrt: p.need("ttrt", Params::time)?,
            station_delay: p.need("station_delay", Params::time)?,
            fibre_length: p.need("fibre_length", Params::length)?,
            token_octets: p.need("token_octets", Params::int)? as u32,
            sync_alloc: p.need("sync_alloc", Params::time)?,
            t_pri: p.opt_list("t_pri")?,
            priority: p.need("priority", Params::int)? as u8,
            traffic: p.need_choice("traffic", &[("bursty", Traffic::Bursty), ("constant", Traffic::Constant), ("poisson", Traffic::Poisson), ("saturated", Traffic::Saturated), ("none", Traffic::None)])?,
            synchronous: p.need_choice("traffic_class", &[("asynchronous", false), ("synchronous", true)])?,
            rate: p.need("rate", Params::rate)?,
            frame_data: p.need("frame_data", Params::size)?,
            peak_to_mean: p.need("peak_to_mean", Params::float)?,
            burst: p.need("burst", Params::time)?,
            tx_buffer: p.need("tx_buffer", Params::size)?,
            connections: p.opt_list("connections")?,
            gateway: p.opt("gateway", Params::int)?.map(|g| g as usize),
            gateway_notice: p.need("gateway_notice", Params::bool)?,
        })
    }

    /// Information field of a background frame, octets.
    pub fn frame_data_octets(&self) -> Result<u32, ParamIssue> {
        let b = bytes(self.frame_data, "frame_data")?;
        if b == 0 || b > u64::from(MAX_INFO_OCTETS) {
            return Err(ParamIssue::new("frame_data", format!("{b} B is not a valid FDDI information field; valid: 1 to {MAX_INFO_OCTETS} B (a frame is at most 4,500 octets from SD to FS, 20 of them header and trailer)")));
        }
        Ok(b as u32)
    }

    /// Transmit buffer per station, octets.
    pub fn tx_buffer_octets(&self) -> Result<u64, ParamIssue> {
        let b = bytes(self.tx_buffer, "tx_buffer")?;
        let frame = u64::from(self.frame_data_octets()? + FRAME_OVERHEAD_OCTETS);
        let need = if self.gateway.is_some() { u64::from(MAX_INFO_OCTETS + FRAME_OVERHEAD_OCTETS) } else { frame };
        if b < need {
            return Err(ParamIssue::new("tx_buffer", format!("{b} B is smaller than one frame ({need} B on the medium{}); valid: at least {need} B", if self.gateway.is_some() { ", a maximum-size frame for the gateway" } else { "" })));
        }
        Ok(b)
    }

    /// T_Pri per priority.
    pub fn thresholds(&self) -> Result<[SimDuration; PRIORITIES], ParamIssue> {
        let mut t = [SimDuration::ZERO; PRIORITIES];
        let Some(list) = &self.t_pri else { return Ok(t) };
        if list.len() != PRIORITIES {
            return Err(ParamIssue::new("t_pri", format!("{} thresholds given; valid: exactly 8, for priorities 0 … 7", list.len())));
        }
        for (i, s) in list.iter().enumerate() {
            match parse_quantity(s, Dimension::Time) {
                Ok(Quantity::Time(x)) if x >= 0.0 => t[i] = SimDuration::from_secs_f64(x).ok_or_else(|| ParamIssue::new("t_pri", format!("T_Pri[{i}] = '{s}' is out of range")))?,
                Ok(_) => return Err(ParamIssue::new("t_pri", format!("T_Pri[{i}] = '{s}' is not a time ≥ 0"))),
                Err(e) => return Err(ParamIssue::new("t_pri", format!("T_Pri[{i}] = '{s}': {e}"))),
            }
        }
        Ok(t)
    }

    /// Per station: its connections as (ICN, destination station).
    pub fn tables(&self) -> Result<Vec<Vec<(u32, usize)>>, ParamIssue> {
        let n = self.stations;
        let Some(list) = &self.connections else {
            return Ok((0..n).map(|i| vec![(i as u32, (i + 1) % n)]).collect());
        };
        let mut t = vec![Vec::new(); n];
        let bad = |e: &str, why: String| ParamIssue::new("connections", format!("'{e}': {why}; valid: \"STATION: ICN -> DEST\" with stations 0 … {}", n - 1));
        for e in list {
            let (st, rest) = e.split_once(':').ok_or_else(|| bad(e, "no ':' after the station".into()))?;
            let (icn, dst) = rest.split_once("->").ok_or_else(|| bad(e, "no '->'".into()))?;
            let st: usize = st.trim().parse().map_err(|_| bad(e, format!("station '{}' is not a number", st.trim())))?;
            let icn: u32 = icn.trim().parse().map_err(|_| bad(e, format!("ICN '{}' is not a number", icn.trim())))?;
            let dst: usize = dst.trim().parse().map_err(|_| bad(e, format!("destination '{}' is not a number", dst.trim())))?;
            if st >= n || dst >= n {
                return Err(bad(e, "no such station".into()));
            }
            if st == dst {
                return Err(bad(e, "a station does not send to itself".into()));
            }
            if t[st].iter().any(|c: &(u32, usize)| c.0 == icn) {
                return Err(bad(e, format!("ICN {icn} appears twice for station {st}")));
            }
            t[st].push((icn, dst));
        }
        Ok(t)
    }

    /// Hop delays: hop i from station i to station i+1 (fibre split evenly, in whole
    /// picoseconds that add up to the whole fibre).
    pub fn hops(&self) -> Vec<SimDuration> {
        let n = self.stations as u64;
        let fibre = fibre_delay(self.fibre_length).0;
        (0..n).map(|i| SimDuration(self.station_delay.0 + (i + 1) * fibre / n - i * fibre / n)).collect()
    }

    /// Ring latency D.
    pub fn latency(&self) -> SimDuration {
        SimDuration(self.hops().iter().map(|h| h.0).sum())
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        if self.ttrt.0 == 0 {
            return Err(ParamIssue::new("ttrt", "0 s is not a target token rotation time; valid: a time > 0 (e.g. \"8 ms\")"));
        }
        if let Some(g) = self.gateway {
            if g >= self.stations {
                return Err(ParamIssue::new("gateway", format!("station {g} does not exist; valid: 0 … {}", self.stations - 1)));
            }
        }
        if self.gateway_notice && self.gateway.is_none() {
            return Err(ParamIssue::new("gateway_notice", "true without a gateway station; valid: set gateway = STATION, or gateway_notice = false"));
        }
        self.frame_data_octets()?;
        self.tx_buffer_octets()?;
        self.thresholds()?;
        let tables = self.tables()?;
        if self.traffic != Traffic::None {
            if let Some((s, _)) = tables.iter().enumerate().find(|(s, t)| t.is_empty() && Some(*s) != self.gateway) {
                return Err(ParamIssue::new("connections", format!("station {s} has background traffic but no connection; give it one (\"{s}: ICN -> DEST\") or set traffic = \"none\"")));
            }
        }
        if self.traffic == Traffic::Bursty && self.burst.0 == 0 {
            return Err(ParamIssue::new("burst", "0 s; valid: a mean on period > 0"));
        }
        let max_frame = octets_time(MAX_INFO_OCTETS + FRAME_OVERHEAD_OCTETS);
        let need = self.latency().0 + self.stations as u64 * self.sync_alloc.0 + max_frame.0 + octets_time(self.token_octets).0;
        if need > self.ttrt.0 {
            return Err(ParamIssue::new("ttrt", format!(
                "{} is too short for this ring: latency {} + {} stations × sync_alloc {} + a maximum frame {} + a token = {}; valid: ttrt ≥ that, or less synchronous allocation",
                self.ttrt, self.latency(), self.stations, self.sync_alloc, max_frame, SimDuration(need)
            )));
        }
        if self.synchronous && self.traffic != Traffic::None && self.sync_alloc < octets_time(self.frame_data_octets()? + FRAME_OVERHEAD_OCTETS) {
            return Err(ParamIssue::new("sync_alloc", format!("{} cannot carry one background frame ({}) of traffic_class = \"synchronous\"; valid: at least one frame time", self.sync_alloc, octets_time(self.frame_data_octets()? + FRAME_OVERHEAD_OCTETS))));
        }
        Ok(())
    }
}

/// A frame in a station's buffer or on the ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Pending {
    frame: Frame,
    /// Destination station.
    to: u16,
    /// The connection (ICN) it belongs to.
    icn: u32,
    /// The station that made it (a background frame; None for the gateway's frames,
    /// named by their own flow): for the cell trace's rows.
    origin: Option<u16>,
}

impl Pending {
    /// Where a trace row about this frame at station `at` happens, and whose it is.
    fn place(&self, at: usize) -> FramePlace {
        FramePlace { station: Some(at as u16), origin: self.origin }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Arrival {
    at: SimTime,
    seq: u64,
    p: Pending,
}

impl Ord for Arrival {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}
impl PartialOrd for Arrival {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

#[derive(Clone, Debug)]
struct Station {
    mac: Mac,
    queues: [VecDeque<Pending>; PRIORITIES + 1],
    buffered: u64,
    conns: Vec<(u32, usize)>,
    next_conn: usize,
    rng: Stream,
    /// Bursty: end of the current on period (None: off until the next event).
    on_until: SimTime,
    next_seq: u32,
    last_token: Option<SimTime>,
    rotation: Tally,
    late: u64,
    tx_frames: u64,
    tx_octets: u64,
    rx_frames: u64,
    delay: Tally,
    drops: u64,
}

/// Where the token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Arriving at the station (the event is its arrival).
    Arrive,
    /// The station is sending a frame (the event is the end of its last bit).
    Sending(Pending),
}

/// The `fddi_ring` component.
#[derive(Clone, Debug)]
pub struct Ring {
    p: RingParams,
    flow: u32,
    hops: Vec<SimDuration>,
    /// Position of station i along the ring from station 0.
    pos: Vec<u64>,
    latency: u64,
    frame_octets: u32,
    buffer: u64,
    st: Vec<Station>,
    at: usize,
    phase: Phase,
    sent_this_visit: bool,
    on_ring: BinaryHeap<Reverse<Arrival>>,
    arrivals: u64,
    rotation: Tally,
    busy: u64,
    since: SimTime,
    generated: u64,
    /// Own frames that left on gw_rx.
    sent_out: u64,
    delivered: ByFlow<u64>,
    dropped_full: ByFlow<u64>,
    dropped_route: ByFlow<u64>,
}

fn count(v: &mut ByFlow<u64>, flow: u32) {
    *v.entry(flow) += 1;
}

impl Ring {
    pub fn new(p: RingParams, flow: u32, stream: impl Fn(usize) -> Stream) -> Result<Ring, ParamIssue> {
        let hops = p.hops();
        let mut pos = Vec::with_capacity(hops.len());
        let mut acc = 0;
        for h in &hops {
            pos.push(acc);
            acc += h.0;
        }
        let cfg = MacConfig { ttrt: p.ttrt, sync_alloc: p.sync_alloc, t_pri: p.thresholds()? };
        let tables = p.tables()?;
        let st = (0..p.stations)
            .map(|i| Station {
                // Initialisation rotation: TRT starts as the token passes (see module doc).
                mac: Mac::new(cfg, SimTime(pos[i])),
                queues: Default::default(),
                buffered: 0,
                conns: tables[i].clone(),
                next_conn: 0,
                rng: stream(i),
                on_until: SimTime::ZERO,
                next_seq: 0,
                last_token: None,
                rotation: Tally::default(),
                late: 0,
                tx_frames: 0,
                tx_octets: 0,
                rx_frames: 0,
                delay: Tally::default(),
                drops: 0,
            })
            .collect();
        Ok(Ring {
            frame_octets: p.frame_data_octets()? + FRAME_OVERHEAD_OCTETS,
            buffer: p.tx_buffer_octets()?,
            flow,
            hops,
            pos,
            latency: acc,
            st,
            at: 0,
            phase: Phase::Arrive,
            sent_this_visit: false,
            on_ring: BinaryHeap::new(),
            arrivals: 0,
            rotation: Tally::default(),
            busy: 0,
            since: SimTime::ZERO,
            generated: 0,
            sent_out: 0,
            delivered: ByFlow::new(),
            dropped_full: ByFlow::new(),
            dropped_route: ByFlow::new(),
            p,
        })
    }

    /// Ring latency D.
    pub fn latency(&self) -> SimDuration {
        SimDuration(self.latency)
    }

    fn class(&self) -> usize {
        if self.p.synchronous { SYNC_Q } else { self.p.priority as usize }
    }

    fn has_generator(&self, i: usize) -> bool {
        self.p.traffic != Traffic::None && Some(i) != self.p.gateway
    }

    /// A new background frame of station `i`, on its next connection.
    fn make_frame(&mut self, i: usize, now: SimTime) -> Pending {
        let flow = self.flow;
        let octets = self.frame_octets;
        let s = &mut self.st[i];
        let (icn, to) = s.conns[s.next_conn % s.conns.len()];
        s.next_conn = (s.next_conn + 1) % s.conns.len();
        s.next_seq = s.next_seq.wrapping_add(1);
        self.generated += 1;
        Pending { frame: Frame { born: now, flow, octets, dst: to as u32, seq: s.next_seq, payload: PayloadId::NONE }, to: to as u16, icn, origin: Some(i as u16) }
    }

    /// Puts a frame in station `i`'s buffer (class queue `q`), or drops it when full.
    fn enqueue(&mut self, i: usize, q: usize, p: Pending, ctx: &mut Cx<'_>) {
        let s = &mut self.st[i];
        if s.buffered + u64::from(p.frame.octets) > self.buffer {
            s.drops += 1;
            count(&mut self.dropped_full, p.frame.flow);
            observe(Observation::Frame { event: Event::Drop("buffer_full"), frame: &p.frame, place: p.place(i) }, ctx);
            if p.frame.payload.is_some() {
                ctx.store().payloads.release(p.frame.payload);
            }
            return;
        }
        s.buffered += u64::from(p.frame.octets);
        s.queues[q].push_back(p);
    }

    /// Mean gap between background frames at `rate`, ps.
    fn mean_gap_ps(&self, rate_factor: f64) -> f64 {
        self.p.rate.time_for_bits(u64::from(self.frame_octets - FRAME_OVERHEAD_OCTETS) * 8).0 as f64 / rate_factor
    }

    /// When station `i`'s next background frame is made, after one made at `now`.
    fn next_frame_time(&mut self, i: usize, now: SimTime) -> SimTime {
        match self.p.traffic {
            Traffic::Constant => now.plus(self.p.rate.time_for_bits(u64::from(self.frame_octets - FRAME_OVERHEAD_OCTETS) * 8)),
            Traffic::Poisson => {
                let m = self.mean_gap_ps(1.0);
                now.plus(SimDuration(exp_ps(&mut self.st[i].rng, m)))
            }
            Traffic::Bursty => {
                let gap = self.mean_gap_ps(self.p.peak_to_mean);
                let on = self.p.burst.0 as f64;
                let off = on * (self.p.peak_to_mean - 1.0);
                let s = &mut self.st[i];
                let mut t = now.plus(SimDuration(exp_ps(&mut s.rng, gap)));
                // Memoryless: a frame drawn past the end of the on period is replaced by
                // the first frame of the next on period.
                while t >= s.on_until {
                    let start = s.on_until.plus(SimDuration(exp_ps(&mut s.rng, off)));
                    s.on_until = start.plus(SimDuration(exp_ps(&mut s.rng, on)));
                    t = start.plus(SimDuration(exp_ps(&mut s.rng, gap)));
                }
                t
            }
            Traffic::Saturated | Traffic::None => SimTime::MAX,
        }
    }

    /// The station holding the token sends its next frame, or issues the token.
    fn serve(&mut self, ctx: &mut Cx<'_>) {
        let i = self.at;
        let saturated = self.p.traffic == Traffic::Saturated && self.has_generator(i);
        let class_q = self.class();
        let mut pick = None;
        // Synchronous first, then asynchronous from the highest priority down.
        for q in std::iter::once(SYNC_Q).chain((0..PRIORITIES).rev()) {
            let class = if q == SYNC_Q { Class::Sync } else { Class::Async(q as u8) };
            let octets = match self.st[i].queues[q].front() {
                Some(p) => p.frame.octets,
                None if saturated && q == class_q => self.frame_octets,
                None => continue,
            };
            if self.st[i].mac.may_send(class, octets_time(octets)) {
                pick = Some((q, class));
                break;
            }
        }
        match pick {
            Some((q, class)) => {
                let p = match self.st[i].queues[q].pop_front() {
                    Some(p) => {
                        self.st[i].buffered -= u64::from(p.frame.octets);
                        p
                    }
                    None => self.make_frame(i, ctx.now),
                };
                let time = octets_time(p.frame.octets);
                observe(Observation::Frame { event: Event::Depart(FRAME_NO_PORT), frame: &p.frame, place: p.place(i) }, ctx);
                self.st[i].mac.sent(class, time);
                self.sent_this_visit = true;
                self.phase = Phase::Sending(p);
                ctx.schedule_at(ctx.now.plus(time), TAG_TOKEN);
            }
            None => {
                self.st[i].mac.release();
                let issue = if self.sent_this_visit { octets_time(self.p.token_octets).0 } else { 0 };
                let next_at = ctx.now.plus(SimDuration(issue + self.hops[i].0));
                self.at = (i + 1) % self.st.len();
                self.phase = Phase::Arrive;
                self.sent_this_visit = false;
                ctx.schedule_at(next_at, TAG_TOKEN);
            }
        }
    }

    /// Path delay from station `a` to station `b` along the ring.
    fn path(&self, a: usize, b: usize) -> u64 {
        let (pa, pb) = (self.pos[a], self.pos[b]);
        if pb > pa { pb - pa } else { self.latency - pa + pb }
    }

    fn on_token(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let i = self.at;
        match self.phase {
            Phase::Arrive => {
                let s = &mut self.st[i];
                if let Some(last) = s.last_token {
                    let r = now.since(last).0 as f64;
                    s.rotation.add(r);
                    self.rotation.add(r);
                }
                s.last_token = Some(now);
                match s.mac.on_token(now) {
                    Ok(super::mac::Capture::Late) => s.late += 1,
                    Ok(super::mac::Capture::Early { .. }) => {}
                    Err(c) => {
                        ctx.fail(format!("station {i} lost the token: TRT expired twice (at {}) — the ring parameters should prevent this", c.at.as_secs_f64()));
                        return;
                    }
                }
                self.serve(ctx);
            }
            Phase::Sending(p) => {
                let s = &mut self.st[i];
                s.tx_frames += 1;
                s.tx_octets += u64::from(p.frame.octets);
                // Only the part of the frame after the warm-up counts: a frame begun
                // before the statistics were reset would otherwise push the
                // utilisation of a short window above 1.
                self.busy += octets_time(p.frame.octets).0.min(now.since(self.since).0);
                if self.p.gateway_notice && Some(i) == self.p.gateway && p.frame.flow != self.flow {
                    // The frame has left the gateway's transmit buffer.
                    ctx.send(1, Msg::Frame(Frame { payload: PayloadId::NONE, ..p.frame }));
                }
                let at = now.plus(SimDuration(self.path(i, p.to as usize)));
                self.arrivals += 1;
                self.on_ring.push(Reverse(Arrival { at, seq: self.arrivals, p }));
                ctx.schedule_at(at, TAG_DELIVER);
                self.serve(ctx);
            }
        }
    }

    /// This component's own frames: generated − delivered (here or out on gw_rx) −
    /// dropped − in flight.
    fn frame_balance(&self) -> i64 {
        let at = |v: &ByFlow<u64>| v.get(self.flow).copied().unwrap_or(0) as i64;
        let mine = |p: &Pending| i64::from(p.frame.flow == self.flow);
        let queued: i64 = self.st.iter().flat_map(|s| s.queues.iter().flatten()).map(mine).sum();
        let on_ring: i64 = self.on_ring.iter().map(|a| mine(&a.0.p)).sum();
        let sending = match self.phase {
            Phase::Sending(p) => mine(&p),
            Phase::Arrive => 0,
        };
        self.generated as i64 - at(&self.delivered) - self.sent_out as i64 - at(&self.dropped_full) - at(&self.dropped_route) - queued - on_ring - sending
    }

    fn on_deliver(&mut self, ctx: &mut Cx<'_>) {
        let Some(Reverse(a)) = self.on_ring.pop() else {
            ctx.fail("a frame delivery with no frame on the ring".into());
            return;
        };
        let to = a.p.to as usize;
        observe(Observation::Frame { event: Event::Arrive(FRAME_NO_PORT), frame: &a.p.frame, place: a.p.place(to) }, ctx);
        let s = &mut self.st[to];
        s.rx_frames += 1;
        s.delay.add(ctx.now.since(a.p.frame.born).0 as f64);
        if Some(to) == self.p.gateway {
            let mut f = a.p.frame;
            f.dst = a.p.icn;
            self.sent_out += u64::from(f.flow == self.flow);
            ctx.send(0, Msg::Frame(f));
        } else {
            count(&mut self.delivered, a.p.frame.flow);
            if a.p.frame.payload.is_some() {
                ctx.store().payloads.release(a.p.frame.payload);
            }
        }
    }
}

impl Kind for Ring {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = RingParams::bind(p)?;
        params.validate()?;
        Ring::new(params, b.flow, |i| b.stream(&format!("s{i}/arrivals")))
    }

    fn start(&mut self, ctx: &mut Cx<'_>) {
        // The first usable token reaches station 0 after the initialisation rotation.
        ctx.schedule_at(SimTime(self.latency), TAG_TOKEN);
        for i in 0..self.st.len() {
            if !self.has_generator(i) || self.p.traffic == Traffic::Saturated {
                continue;
            }
            let first = match self.p.traffic {
                Traffic::Bursty => {
                    // Start in the stationary distribution: on with probability 1/ratio.
                    let u: f64 = rand::Rng::random(&mut self.st[i].rng);
                    if u * self.p.peak_to_mean < 1.0 {
                        let on = self.p.burst.0 as f64;
                        self.st[i].on_until = SimTime(exp_ps(&mut self.st[i].rng, on));
                    }
                    self.next_frame_time(i, SimTime::ZERO)
                }
                Traffic::Poisson => self.next_frame_time(i, SimTime::ZERO),
                _ => SimTime::ZERO,
            };
            ctx.schedule_at(first, TAG_GEN + i as u32);
        }
    }

    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        match tag {
            TAG_TOKEN => self.on_token(ctx),
            TAG_DELIVER => self.on_deliver(ctx),
            _ => {
                let i = (tag - TAG_GEN) as usize;
                let now = ctx.now;
                let p = self.make_frame(i, now);
                let q = self.class();
                self.enqueue(i, q, p, ctx);
                let next = self.next_frame_time(i, now);
                if next != SimTime::MAX {
                    ctx.schedule_at(next, tag);
                }
            }
        }
    }

    fn on_frame(&mut self, _port: PortId, frame: Frame, ctx: &mut Cx<'_>) {
        let g = self.p.gateway.unwrap_or(0);
        let to = frame.dst as usize;
        if to >= self.st.len() || to == g || frame.octets > MAX_INFO_OCTETS + FRAME_OVERHEAD_OCTETS || frame.octets <= FRAME_OVERHEAD_OCTETS {
            if self.p.gateway_notice {
                // The gateway counts on a notice for every frame it hands over.
                ctx.fail(format!("frame for station {to} ({} octets) on gw_tx cannot be sent: valid: a station 0 … {} other than the gateway ({g}), {} to {} octets on the medium", frame.octets, self.st.len() - 1, FRAME_OVERHEAD_OCTETS + 1, MAX_INFO_OCTETS + FRAME_OVERHEAD_OCTETS));
            }
            count(&mut self.dropped_route, frame.flow);
            observe(Observation::Frame { event: Event::Drop("no_route"), frame: &frame, place: FramePlace::default() }, ctx);
            if frame.payload.is_some() {
                ctx.store().payloads.release(frame.payload);
            }
            return;
        }
        let q = self.p.priority as usize;
        if self.p.gateway_notice && self.st[g].buffered + u64::from(frame.octets) > self.buffer {
            ctx.fail(format!("the gateway station's transmit buffer (tx_buffer = {} B) is full: with gateway_notice the gateway owns the transmit buffer; give the ring a tx_buffer at least as large as the gateway's", self.buffer));
        }
        self.enqueue(g, q, Pending { frame, to: to as u16, icn: 0, origin: None }, ctx);
    }

    fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        self.busy = 0;
        self.rotation.reset();
        for s in &mut self.st {
            s.rotation.reset();
            s.delay.reset();
            s.late = 0;
            s.tx_frames = 0;
            s.tx_octets = 0;
            s.rx_frames = 0;
            s.drops = 0;
        }
    }

    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        self.rotation.report(out, path, "mac_token_rotation", "s", 1e-12);
        out.push(path, "ring_utilisation", "value", if secs > 0.0 { self.busy as f64 * 1e-12 / secs } else { f64::NAN }, "1");
        out.push(path, "ring_latency", "value", self.latency as f64 * 1e-12, "s");
        out.push(path, "ring_frame_balance", "value", self.frame_balance() as f64, "frames");
        for (i, s) in self.st.iter().enumerate() {
            let name = format!("{path}/s{i}");
            s.rotation.report(out, &name, "mac_token_rotation", "s", 1e-12);
            out.push(&name, "mac_late_tokens", "count", s.late as f64, "tokens");
            out.push(&name, "mac_tx_frames", "count", s.tx_frames as f64, "frames");
            out.push(&name, "mac_tx_rate", "value", if secs > 0.0 { s.tx_octets as f64 * 8.0 / secs / 1e6 } else { f64::NAN }, "Mb/s");
            out.push(&name, "mac_rx_frames", "count", s.rx_frames as f64, "frames");
            s.delay.report(out, &name, "mac_frame_delay", "s", 1e-12);
            out.push(&name, "mac_drop_frames", "count", s.drops as f64, "frames");
        }
    }

    fn ledger(&self, l: &mut Ledger) {
        l.add_generated(self.flow, self.generated);
        for (f, &n) in self.delivered.iter() {
            l.add_delivered(f, n);
        }
        for (f, &n) in self.dropped_full.iter() {
            l.add_dropped("buffer_full", f, n);
        }
        for (f, &n) in self.dropped_route.iter() {
            l.add_dropped("no_route", f, n);
        }
        let mut held = |p: &Pending| {
            l.add_in_flight(p.frame.flow, 1);
            l.add_payloads_held(u64::from(p.frame.payload.is_some()));
        };
        self.st.iter().flat_map(|s| s.queues.iter().flatten()).for_each(&mut held);
        self.on_ring.iter().for_each(|a| held(&a.0.p));
        if let Phase::Sending(p) = self.phase {
            held(&p);
        }
    }

    fn source_flow(&self) -> Option<(u32, u32)> {
        Some((self.flow, 0))
    }
}

/// With a gateway station: frame ports `gw_tx` (in) and `gw_rx` (out), and `gw_done` (out) with `gateway_notice = true`; without: none.
pub fn ports(p: &Params) -> Ports {
    let gw = matches!(p.get("gateway"), Some(crate::params::Value::Int(_)));
    if !gw {
        return Ports::default();
    }
    let mut outputs = vec![PortDecl::new("gw_rx", false, true).carrying(Carries::Frames)];
    if matches!(p.get("gateway_notice"), Some(crate::params::Value::Bool(true))) {
        outputs.push(PortDecl::new("gw_done", false, true).carrying(Carries::Frames));
    }
    Ports { inputs: vec![PortDecl::new("gw_tx", false, true).carrying(Carries::Frames)], outputs }
}

/// The `fddi_ring` kind's declarations (registered in `lib.rs`).
/// The stations of a ring with these parameters (a trace names them `RING/sI`).
fn stations(p: &Params) -> i64 {
    p.int("stations").unwrap_or(0)
}

pub const KIND: KindInfo = KindInfo {
    kind: "fddi_ring",
    help: "FDDI timed-token ring (stations, background traffic, optional gateway station)",
    source: "ANSI X3.139-1987; buddhikot92 section 5",
    params: &[&PARAMS],
    inputs: &[PortSpec::frames("gw_tx", false)],
    outputs: &[PortSpec::frames("gw_rx", false), PortSpec::frames("gw_done", false)],
    ports: Some(ports),
    probes: &[&PROBES],
    series: &[],
    is_source: true,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed { capture: None, stations: Some(stations) },
};
