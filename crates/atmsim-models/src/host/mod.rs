//! Hosts: IPv4 over AAL5 (RFC 1577 / RFC 1483 LLC/SNAP) on an ATM interface.
//!
//! ```text
//!          ping / echo / UDP blaster
//!                    │
//!        IPv4 (MTU, fragmentation, reassembly)
//!                    │  + 8 octets LLC/SNAP
//!        AAL5 SAR (segment; reassemble per VC)
//!                    │
//!   in ──► [ interface: cells of a PDU leave back to back at the line rate,
//!            or spaced at `peak` ] ──► out
//! ```
//!
//! One component holds the whole stack, so a host costs one dispatch per cell. The
//! protocol logic is plain functions over metadata: an IP datagram of `L` octets
//! (20-octet header included) larger than the MTU is cut into fragments carrying
//! `floor((MTU − 20) / 8) · 8` octets of data each (RFC 791); each IP packet plus
//! 8 octets of LLC/SNAP is one AAL5 PDU of `ceil((len + 8 trailer) / 48)` cells.
//!
//! What a receiver must learn from bytes it never sees is carried in the cells:
//! `Cell::seq` = `kind << 30 | datagram id << 6 | fragment index`, the
//! last-fragment mark (IP "more fragments" = 0) in the flags, and the PDU's cell count.
//! An echo reply mirrors the request's fragments cell for cell (same sizes), as ICMP
//! echo returns the data it got.

pub mod conn;
pub mod ip;
pub mod tcp;

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::PortId;
use std::collections::VecDeque;

use rand::Rng;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report, Tally};
use atmsim_kernel::{Ledger, Rate, SimDuration, SimTime, Stream};

use crate::series::SeriesDecl;
use atmsim_kernel::SeriesKind;
use crate::aal::aal5::{self, Reassembler, Reassembly};
use crate::control::pacer::Pacer;
use conn::{Conn, Endpoint};
use tcp::Segment;
use crate::cell::Cell;
use crate::payload::Payload;
use crate::wirecheck;
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};
use crate::traffic::exp_ps;
use crate::link::transmitter::{line_rate, CellBuffer, Transmitter, PHY_NAMES};
use ip::{decode_seq, encode_seq, fragment_sizes, Kind, FLAG_LAST_FRAGMENT, LLC_SNAP, ICMP_HEADER, UDP_HEADER};

pub const PARAMS: [ParamSpec; 18] = [
    ParamSpec { name: "phy", ty: ParamType::Choice(&PHY_NAMES), default: None, required: false, help: "interface line rate (default OC-3c; or give rate)", source: "SBus OC-3c adapters in domingo95 and lazarou96" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "interface cell rate instead of phy", source: "" },
    ParamSpec { name: "peak", ty: ParamType::Rate, default: None, required: false, help: "peak cell rate limit of the adapter (cells spaced at this rate); default: none, cells of a PDU leave back to back", source: "domingo95 section 4 (drivers should limit the peak rate)" },
    ParamSpec { name: "vc", ty: ParamType::Int { min: 0, max: 4_294_967_295 }, default: None, required: false, help: "VC label (VCI, or VPI<<16|VCI) of the PVC ping and UDP send on (TCP connections name their own)", source: "scenario" },
    ParamSpec { name: "mtu", ty: ParamType::Size, default: Some("9180 B"), required: false, help: "IP MTU in octets", source: "RFC 1626 (IP over ATM default MTU 9180)" },
    ParamSpec { name: "sar_delay", ty: ParamType::Time, default: Some("0 s"), required: false, help: "AAL5 segmentation time per PDU before its cells enter the interface", source: "lazarou96 Table 1 gives 0.2 us" },
    ParamSpec { name: "reassembly_timeout", ty: ParamType::Time, default: Some("1 s"), required: false, help: "AAL5 reassembly timeout: a partial PDU older than this is discarded", source: "atmsim convention (I.363.5 leaves it to the implementation)" },
    ParamSpec { name: "ip_reassembly_timeout", ty: ParamType::Time, default: Some("30 s"), required: false, help: "IP fragment reassembly timeout", source: "RFC 1122 suggests 60-120 s; Linux uses 30 s" },
    ParamSpec { name: "app", ty: ParamType::Choice(&["none", "ping", "udp"]), default: Some("none"), required: false, help: "what the host sends (every host answers echo requests)", source: "" },
    ParamSpec { name: "count", ty: ParamType::Int { min: 1, max: 1_000_000_000 }, default: Some("100"), required: false, help: "ping: echo requests to send", source: "domingo95: batches of 100 pings" },
    ParamSpec { name: "interval", ty: ParamType::Time, default: Some("1 s"), required: false, help: "ping: time between requests", source: "ping(8) default" },
    ParamSpec { name: "length", ty: ParamType::Size, default: Some("64 B"), required: false, help: "ping: ICMP data octets (ping -s); udp: UDP data octets", source: "ping(8) default 56; domingo95 uses 64 to 8192" },
    ParamSpec { name: "timeout", ty: ParamType::Time, default: Some("10 s"), required: false, help: "ping: a reply later than this counts as lost", source: "ping(8) -W" },
    ParamSpec { name: "udp_rate", ty: ParamType::Rate, default: None, required: false, help: "udp: IP-layer sending rate of the blaster (ttcp -u limited by the host)", source: "domingo95: 20-25 Mb/s from a SPARCstation" },
    ParamSpec { name: "udp_spacing", ty: ParamType::Choice(&["periodic", "poisson"]), default: Some("periodic"), required: false, help: "udp: datagrams evenly spaced, or with exponential gaps of the same mean (a host whose timing jitters)", source: "atmsim convention" },
    ParamSpec { name: "start", ty: ParamType::Time, default: Some("0 s"), required: false, help: "when the application starts", source: "" },
    ParamSpec { name: "stop", ty: ParamType::Time, default: None, required: false, help: "udp: when the blaster stops (default: never)", source: "" },
    ParamSpec { name: "reply", ty: ParamType::Bool, default: Some("true"), required: false, help: "answer ICMP echo requests", source: "" },
];

/// What a host samples as time series (its interface: `<host>/nic`, with the
/// transmitter's series; its connections: `<host>/tcp/vc<N>`).
pub const SERIES: [SeriesDecl; 2] = [
    SeriesDecl { name: "cpu_util", unit: "1", kind: SeriesKind::Rate, scale: 1e-12, help: "fraction of each interval the CPU spent on segments (booked when a segment starts)" },
    SeriesDecl { name: "udp_rx", unit: "1/s", kind: SeriesKind::Rate, scale: 1.0, help: "UDP datagrams received whole per second over each interval" },
];

pub const PROBES: [ProbeSpec; 9] = [
    ProbeSpec { name: "ping_tx", unit: "1", kind: ProbeKind::Counter, help: "echo requests sent (count)" },
    ProbeSpec { name: "ping_rx", unit: "1", kind: ProbeKind::Counter, help: "echo replies received in time (count)" },
    ProbeSpec { name: "ping_loss", unit: "1", kind: ProbeKind::Gauge, help: "1 − replies / requests, as ping reports it (value)" },
    ProbeSpec { name: "ping_rtt", unit: "s", kind: ProbeKind::Tally, help: "round-trip times of the replies (count, mean, std, min, max)" },
    ProbeSpec { name: "udp_tx", unit: "1", kind: ProbeKind::Counter, help: "UDP datagrams sent (count; rate in datagrams/s)" },
    ProbeSpec { name: "udp_rx", unit: "1", kind: ProbeKind::Counter, help: "UDP datagrams received whole (count; rate)" },
    ProbeSpec { name: "aal5_rx_pdus", unit: "1", kind: ProbeKind::Counter, help: "AAL5 PDUs reassembled whole (count)" },
    ProbeSpec { name: "aal5_drop_pdus", unit: "1", kind: ProbeKind::Counter, help: "AAL5 PDUs discarded (count; statistics length, crc, timeout by cause)" },
    ProbeSpec { name: "ip_drop_datagrams", unit: "1", kind: ProbeKind::Counter, help: "IP datagrams never completed because a fragment was lost (count at the end of the run, including pending ones)" },
];

const TAG_APP: u32 = 0;
const TAG_SAR: u32 = 1;
const TAG_NIC: u32 = 2; // and 3: the interface transmitter
const TAG_CPU: u32 = 4;
const TAG_SLOW: u32 = 5;
const TAG_FAST: u32 = 6;
const TAG_TCP_START: u32 = 7;
/// Adapter pacers: `TAG_PACER + i`.
const TAG_PACER: u32 = 1 << 16;
/// Fine TCP timers of connection `i`: `TAG_CONN + i`.
const TAG_CONN: u32 = 2 << 16;

/// Work for the host CPU: one TCP segment to send or to process.
#[derive(Clone, Copy, Debug)]
struct Job {
    conn: u16,
    rx: bool,
    seg: Segment,
}

/// A PDU waiting for segmentation.
#[derive(Clone, Copy, Debug)]
struct PendingPdu {
    at: SimTime,
    born: SimTime,
    vc: u32,
    seq: u32,
    cells: u16,
    last: bool,
    /// The headers the PDU's last cell carries (TCP segments), as a payload.
    headers: Option<Payload>,
    pacer: Option<u16>,
}

/// IP datagrams being reassembled.
#[derive(Clone, Debug)]
struct Partial {
    key: (u32, u32), // (flow, seq without fragment index)
    started: SimTime,
    born: SimTime,
    got: u64,
    last: Option<u8>,
    cells: Vec<u16>,
}

#[derive(Clone, Debug)]
pub struct Host {
    flow: u32,
    vc: u32,
    mtu: usize,
    sar_delay: SimDuration,
    aal_timeout: SimDuration,
    ip_timeout: SimDuration,
    app: String,
    count: u64,
    interval: SimDuration,
    length: usize,
    ping_timeout: SimDuration,
    udp_gap: Option<SimDuration>,
    udp_poisson: bool,
    rng: Stream,
    start: SimTime,
    stop: SimTime,
    reply: bool,
    nic: Transmitter,
    sar: VecDeque<PendingPdu>,
    conns: Vec<Conn>,
    pacers: Vec<Pacer>,
    cpu: VecDeque<Job>,
    cpu_busy: bool,
    cpu_cost: SimDuration,
    cpu_time: u64,
    cpu_base: u64,
    timer_phase: SimDuration,
    slow_tick: SimDuration,
    fast_tick: SimDuration,
    tcp_start: SimTime,
    segs: Vec<Segment>,
    tcp_strays: u64,
    reassembly: Vec<(u32, Reassembler)>,
    partials: VecDeque<Partial>,
    next_id: u32,
    sent_at: Vec<SimTime>,
    // whole-run books
    generated: u64,
    delivered_by_flow: Vec<u64>,
    aal_dropped: Vec<(&'static str, u32, u64)>,
    // statistics (since warm-up)
    ping_tx: u64,
    ping_rx: u64,
    rtt: Tally,
    udp_tx: u64,
    udp_rx: u64,
    pdus_rx: u64,
    pdus_drop: [u64; 3],
    ip_drop: u64,
    since: SimTime,
}

pub(crate) fn size_octets(p: &Params, key: &str) -> Result<usize, ParamIssue> {
    match p.get(key) {
        Some(crate::params::Value::Size(atmsim_kernel::units::Size::Bytes(b))) => Ok(b.round() as usize),
        Some(crate::params::Value::Size(atmsim_kernel::units::Size::Cells(_))) => Err(ParamIssue::new(key, "give octets, e.g. \"1500 B\"")),
        _ => Err(ParamIssue::new(key, "missing")),
    }
}

impl Host {
    pub fn new(p: &Params, flow: u32, rng: Stream, mut timer_rng: Stream) -> Result<Self, ParamIssue> {
        let line: Rate = line_rate(p, Some("OC-3c"))?;
        let rate = match p.rate("peak") {
            Some(pk) if pk < line => pk,
            _ => line,
        };
        let mtu = size_octets(p, "mtu")?;
        if mtu < 68 {
            return Err(ParamIssue::new("mtu", "an IPv4 MTU is at least 68 octets (RFC 791)"));
        }
        let length = size_octets(p, "length")?;
        let app = p.word("app").unwrap_or("none").to_string();
        let udp_gap = match (app.as_str(), p.rate("udp_rate")) {
            ("udp", None) => return Err(ParamIssue::new("udp_rate", "app = \"udp\" needs udp_rate")),
            ("udp", Some(r)) => Some(r.time_for_bits(8 * (length + UDP_HEADER + ip::IP_HEADER) as u64)),
            _ => None,
        };
        if app == "ping" && length + ICMP_HEADER + ip::IP_HEADER > 65_535 {
            return Err(ParamIssue::new("length", "an IPv4 datagram is at most 65,535 octets"));
        }
        if app != "none" && p.int("vc").is_none() {
            return Err(ParamIssue::new("vc", format!("app = \"{app}\" needs the vc it sends on")));
        }
        let tcp_cfg = conn::base_config(p, mtu)?;
        let mut conns = conn::parse(p, &tcp_cfg)?;
        let mut pacers = Vec::new();
        for c in conns.iter_mut() {
            if let Some(r) = c.pace {
                c.pacer = Some(pacers.len());
                pacers.push(Pacer::new(r));
            }
        }
        let timer_phase = match p.time("timer_phase") {
            Some(t) => t,
            None => SimDuration((timer_rng.random::<f64>() * 1e12) as u64),
        };
        let start = SimTime::ZERO.plus(p.time("start").unwrap_or_default());
        let stop = p.time("stop").map(|d| SimTime::ZERO.plus(d)).unwrap_or(SimTime::MAX);
        Ok(Host {
            flow,
            vc: p.int("vc").unwrap_or(0) as u32,
            mtu,
            sar_delay: p.time("sar_delay").unwrap_or_default(),
            aal_timeout: p.time("reassembly_timeout").unwrap_or(SimDuration(1_000_000_000_000)),
            ip_timeout: p.time("ip_reassembly_timeout").unwrap_or(SimDuration(30_000_000_000_000)),
            app,
            count: p.int("count").unwrap_or(100) as u64,
            interval: p.time("interval").unwrap_or(SimDuration(1_000_000_000_000)),
            length,
            ping_timeout: p.time("timeout").unwrap_or(SimDuration(10_000_000_000_000)),
            udp_gap,
            udp_poisson: p.word("udp_spacing") == Some("poisson"),
            rng,
            start,
            stop,
            reply: p.bool("reply").unwrap_or(true),
            nic: Transmitter::with(rate, CellBuffer::fifo(None), SimDuration::ZERO, 0, TAG_NIC),
            sar: VecDeque::new(),
            conns,
            pacers,
            cpu: VecDeque::new(),
            cpu_busy: false,
            cpu_cost: conn::overhead(p),
            cpu_time: 0,
            cpu_base: 0,
            timer_phase,
            slow_tick: tcp_cfg.slow_tick,
            fast_tick: tcp_cfg.fast_tick,
            tcp_start: SimTime::ZERO.plus(p.time("tcp_start").unwrap_or_default()),
            segs: Vec::new(),
            tcp_strays: 0,
            reassembly: Vec::new(),
            partials: VecDeque::new(),
            next_id: 0,
            sent_at: Vec::new(),
            generated: 0,
            delivered_by_flow: Vec::new(),
            aal_dropped: Vec::new(),
            ping_tx: 0,
            ping_rx: 0,
            rtt: Tally::default(),
            udp_tx: 0,
            udp_rx: 0,
            pdus_rx: 0,
            pdus_drop: [0; 3],
            ip_drop: 0,
            since: SimTime::ZERO,
        })
    }

    pub fn flow(&self) -> u32 {
        self.flow
    }
    pub fn vc(&self) -> u32 {
        self.vc
    }

    /// Queues the PDUs of one datagram (given per fragment as cell counts) for SAR.
    fn send_pdus(&mut self, kind: Kind, id: u32, born: SimTime, frag_cells: &[u16], ctx: &mut Cx<'_>) {
        let at = ctx.now.plus(self.sar_delay);
        let n = frag_cells.len();
        for (i, &cells) in frag_cells.iter().enumerate() {
            if self.sar.is_empty() {
                ctx.schedule_at(at, TAG_SAR);
            }
            self.sar.push_back(PendingPdu { at, born, vc: self.vc, seq: encode_seq(kind, id, i as u8), cells, last: i + 1 == n, headers: None, pacer: None });
        }
    }

    fn datagram(&mut self, kind: Kind, id: u32, data: usize, ctx: &mut Cx<'_>) {
        let header = if kind == Kind::Udp { UDP_HEADER } else { ICMP_HEADER };
        let cells: Vec<u16> = fragment_sizes(header + data, self.mtu).iter().map(|&ipl| aal5::cells_for(ipl + LLC_SNAP) as u16).collect();
        let now = ctx.now;
        self.send_pdus(kind, id, now, &cells, ctx);
    }

    /// Moves the segments a connection just produced onto the CPU queue and re-arms its
    /// fine timer.
    fn queue_output(&mut self, i: usize, ctx: &mut Cx<'_>) {
        for seg in self.segs.drain(..) {
            self.cpu.push_back(Job { conn: i as u16, rx: false, seg });
        }
        let c = &mut self.conns[i];
        if let Some(d) = c.deadline() {
            c.timer.arm_earliest(d.max(ctx.now), TAG_CONN + i as u32, ctx);
        }
        self.cpu_kick(ctx);
    }

    fn cpu_kick(&mut self, ctx: &mut Cx<'_>) {
        if !self.cpu_busy && !self.cpu.is_empty() {
            self.cpu_busy = true;
            self.cpu_time += self.cpu_cost.0;
            ctx.schedule_in(self.cpu_cost, TAG_CPU);
        }
    }

    /// The CPU finished the segment at the head of its queue.
    fn cpu_done(&mut self, ctx: &mut Cx<'_>) {
        self.cpu_busy = false;
        let Some(job) = self.cpu.pop_front() else { return };
        let i = job.conn as usize;
        if job.rx {
            let now = ctx.now;
            match &mut self.conns[i].ep {
                Endpoint::Send(s) => s.input(&job.seg, now, &mut self.segs),
                Endpoint::Recv(r) => r.input(&job.seg, now, &mut self.segs),
            }
            self.queue_output(i, ctx);
        } else {
            self.send_segment(i, &job.seg, ctx);
        }
        self.cpu_kick(ctx);
    }

    /// Hands one segment to AAL5: one PDU (TCP segments are never fragmented).
    fn send_segment(&mut self, i: usize, seg: &Segment, ctx: &mut Cx<'_>) {
        let id = self.next_id;
        self.next_id = (self.next_id + 1) & ip::ID_MASK;
        let c = &self.conns[i];
        let at = ctx.now.plus(self.sar_delay);
        if self.sar.is_empty() {
            ctx.schedule_at(at, TAG_SAR);
        }
        let cells = aal5::cells_for(seg.ip_len() + LLC_SNAP) as u16;
        let headers = c.headers(seg, id as u16);
        self.sar.push_back(PendingPdu { at, born: ctx.now, vc: c.out_vc, seq: encode_seq(Kind::Tcp, id, 0), cells, last: true, headers: Some(headers), pacer: c.pacer.map(|p| p as u16) });
    }

    fn tcp_tick(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let slow = tag == TAG_SLOW;
        ctx.schedule_in(if slow { self.slow_tick } else { self.fast_tick }, tag);
        for i in 0..self.conns.len() {
            match &mut self.conns[i].ep {
                Endpoint::Send(s) if slow => s.slow_tick(now, &mut self.segs),
                Endpoint::Recv(r) if !slow => r.fast_tick(&mut self.segs),
                _ => continue,
            }
            if !self.segs.is_empty() {
                self.queue_output(i, ctx);
            }
        }
    }

    fn pacer_release(&mut self, i: usize, ctx: &mut Cx<'_>) {
        let Some(p) = self.pacers.get_mut(i) else { return };
        if let Some(cell) = p.release(TAG_PACER + i as u32, ctx) {
            self.nic.accept(cell, ctx);
        }
    }

    fn app_tick(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        match self.app.as_str() {
            "ping" => {
                let k = self.sent_at.len() as u64;
                if k >= self.count {
                    return;
                }
                self.sent_at.push(now);
                self.ping_tx += 1;
                let id = k as u32;
                self.datagram(Kind::EchoRequest, id, self.length, ctx);
                if k + 1 < self.count {
                    ctx.schedule_at(now.plus(self.interval), TAG_APP);
                }
            }
            "udp" => {
                if now >= self.stop {
                    return;
                }
                let id = self.next_id;
                self.next_id = (self.next_id + 1) & ip::ID_MASK;
                self.udp_tx += 1;
                self.datagram(Kind::Udp, id, self.length, ctx);
                if let Some(g) = self.udp_gap {
                    let gap = if self.udp_poisson { SimDuration(exp_ps(&mut self.rng, g.0 as f64)) } else { g };
                    ctx.schedule_at(now.plus(gap), TAG_APP);
                }
            }
            _ => {}
        }
    }

    fn sar_tick(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        while let Some(p) = self.sar.front().copied() {
            if p.at > now {
                ctx.schedule_at(p.at, TAG_SAR);
                break;
            }
            self.sar.pop_front();
            for mut c in aal5::segment_cells(p.born, self.flow, p.vc, p.seq, p.cells) {
                if p.last {
                    c.flags |= FLAG_LAST_FRAGMENT;
                }
                if let (true, Some(h)) = (c.is_eop(), p.headers) {
                    c.payload = ctx.store().insert(h);
                    if ctx.store().check.on {
                        self.emit_wire(&c, &h, ctx);
                    }
                }
                self.generated += 1;
                match p.pacer {
                    Some(k) => self.pacers[k as usize].enqueue(c, TAG_PACER + k as u32, ctx),
                    None => self.nic.accept(c, ctx),
                }
            }
        }
    }

    /// The checking mode: emits the PDU whose last cell `c` carries headers `h` through
    /// the wire layer and keeps the bytes with the payload.
    #[cold]
    fn emit_wire(&mut self, c: &Cell, h: &Payload, ctx: &mut Cx<'_>) {
        match wirecheck::emit_pdu(h) {
            Ok(mut bytes) => {
                let store = ctx.store();
                if let Some(bit) = store.check.corrupt_next.take() {
                    if let Some(b) = bytes.get_mut(bit / 8) {
                        *b ^= 1 << (bit % 8);
                    }
                }
                store.set_wire(c.payload, bytes);
            }
            Err(e) => ctx.fail(format!("--check-wire: {} PDU {}: {e}", crate::cell::vc_name(c.vc), c.seq)),
        }
    }

    /// A whole TCP segment arrived on `cell.vc` (`cell` is its last cell): queue it for
    /// the CPU of the connection receiving on that VC.
    fn tcp_input(&mut self, cell: &Cell, headers: Option<Payload>, ctx: &mut Cx<'_>) {
        let Some(i) = self.conns.iter().position(|c| c.in_vc == cell.vc) else {
            self.tcp_strays += 1;
            return;
        };
        let Some(Payload::Tcp { tcp, .. }) = headers else {
            ctx.fail(format!("a TCP segment arrived on {} without its TCP header", crate::cell::vc_name(cell.vc)));
            return;
        };
        let seg = Segment::from_repr(&tcp, self.conns[i].near());
        self.cpu.push_back(Job { conn: i as u16, rx: true, seg });
        self.cpu_kick(ctx);
    }

    fn ip_input(&mut self, flow: u32, seq: u32, last: bool, cells: u16, born: SimTime, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        while self.partials.front().is_some_and(|p| now.since(p.started) > self.ip_timeout) {
            self.partials.pop_front();
            self.ip_drop += 1;
        }
        let (kind, id, frag) = decode_seq(seq);
        let key = (flow, seq & !0x3f);
        let pos = match self.partials.iter().position(|p| p.key == key) {
            Some(i) => i,
            None => {
                self.partials.push_back(Partial { key, started: now, born, got: 0, last: None, cells: Vec::new() });
                self.partials.len() - 1
            }
        };
        let p = &mut self.partials[pos];
        p.got |= 1 << frag;
        if p.cells.len() <= frag as usize {
            p.cells.resize(frag as usize + 1, 0);
        }
        p.cells[frag as usize] = cells;
        if p.born > born {
            p.born = born;
        }
        if last {
            p.last = Some(frag);
        }
        let complete = p.last.is_some_and(|l| p.got == (u64::MAX >> (63 - l as u32)));
        if !complete {
            return;
        }
        let Some(p) = self.partials.remove(pos) else { return };
        match kind {
            Kind::EchoRequest if self.reply => self.send_pdus(Kind::EchoReply, id, now, &p.cells, ctx),
            Kind::EchoReply => {
                if let Some(&t0) = self.sent_at.get(id as usize) {
                    let rtt = now.since(t0);
                    if rtt <= self.ping_timeout {
                        self.ping_rx += 1;
                        self.rtt.add(rtt.0 as f64);
                    }
                }
            }
            Kind::Udp => self.udp_rx += 1,
            _ => {}
        }
    }

}

impl crate::kind::Kind for Host {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        Host::new(p, b.flow, b.stream("app"), b.stream("tcp_timers"))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        if self.app != "none" && self.start < self.stop {
            ctx.schedule_at(self.start, TAG_APP);
        }
        if !self.conns.is_empty() {
            ctx.schedule_at(self.tcp_start, TAG_TCP_START);
            // BSD's timers run from boot: the first ticks fall at the phase, then periodically.
            let slow = SimDuration(self.timer_phase.0 % self.slow_tick.0);
            let fast = SimDuration(self.timer_phase.0 % self.fast_tick.0);
            ctx.schedule_at(SimTime::ZERO.plus(slow), TAG_SLOW);
            ctx.schedule_at(SimTime::ZERO.plus(fast), TAG_FAST);
        }
    }
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        // The host consumes every cell it gets: a payload is taken out of the store
        // whether or not its PDU completes.
        let (headers, wire) = if cell.payload.is_some() {
            let store = ctx.store();
            let wire = if store.check.on { store.take_wire(cell.payload) } else { Vec::new() };
            (store.take(cell.payload), wire)
        } else {
            (None, Vec::new())
        };
        let idx = match self.reassembly.iter().position(|(vc, _)| *vc == cell.vc) {
            Some(i) => i,
            None => {
                self.reassembly.push((cell.vc, Reassembler::default()));
                self.reassembly.len() - 1
            }
        };
        let (expired, done) = self.reassembly[idx].1.on_cell(&cell, now, self.aal_timeout);
        for r in [expired, done].into_iter().flatten() {
            match r {
                Reassembly::Delivered { pdu, cells, born } => {
                    let f = cell.flow as usize;
                    if self.delivered_by_flow.len() <= f {
                        self.delivered_by_flow.resize(f + 1, 0);
                    }
                    self.delivered_by_flow[f] += cells as u64;
                    self.pdus_rx += 1;
                    if decode_seq(pdu).0 == Kind::Tcp {
                        if let (true, Some(p)) = (ctx.store().check.on, &headers) {
                            match wirecheck::check_arrival(&cell, &wire, p) {
                                Ok(()) => ctx.store().check.checked += 1,
                                Err(e) => {
                                    ctx.fail(e);
                                    return;
                                }
                            }
                        }
                        self.tcp_input(&cell, headers, ctx);
                        continue;
                    }
                    self.ip_input(cell.flow, pdu, cell.flags & FLAG_LAST_FRAGMENT != 0, cells as u16, born, ctx);
                }
                Reassembly::Discarded { cause, cells, flow } => {
                    let k = match cause {
                        "length" => 0,
                        "crc" => 1,
                        _ => 2,
                    };
                    self.pdus_drop[k] += 1;
                    match self.aal_dropped.iter_mut().find(|e| e.0 == cause && e.1 == flow) {
                        Some(e) => e.2 += cells as u64,
                        None => self.aal_dropped.push((cause, flow, cells as u64)),
                    }
                }
            }
        }
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        match tag {
            TAG_APP => self.app_tick(ctx),
            TAG_SAR => self.sar_tick(ctx),
            TAG_CPU => self.cpu_done(ctx),
            TAG_SLOW | TAG_FAST => self.tcp_tick(tag, ctx),
            TAG_TCP_START => {
                let now = ctx.now;
                for i in 0..self.conns.len() {
                    if let Endpoint::Send(s) = &mut self.conns[i].ep {
                        s.start(now, &mut self.segs);
                    }
                    self.queue_output(i, ctx);
                }
            }
            t if t >= TAG_CONN => {
                let i = (t - TAG_CONN) as usize;
                let now = ctx.now;
                let Some(c) = self.conns.get_mut(i) else { return };
                // The state machines keep their own deadlines (sans-IO): a stale
                // event finds nothing due, so it is handled like the armed one.
                c.timer.fire(now);
                match &mut c.ep {
                    Endpoint::Send(s) => s.on_deadline(now, &mut self.segs),
                    Endpoint::Recv(r) => r.on_deadline(now, &mut self.segs),
                }
                self.queue_output(i, ctx);
            }
            t if t >= TAG_PACER => self.pacer_release((t - TAG_PACER) as usize, ctx),
            _ => self.nic.tick(tag, ctx),
        }
    }
    /// The index of series `name` at `sub` (`""`, `nic`, `tcp/vc<N>`), if any.
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        use crate::series::{code, find, parse_vc_name};
        match sub {
            "" => find(&SERIES, name).map(|q| code(0, q)),
            "nic" => find(&crate::link::transmitter::SERIES, name).map(|q| code(1, q)),
            _ => {
                let label = parse_vc_name(sub.strip_prefix("tcp/")?)?;
                let i = self.conns.iter().position(|c| c.name() == format!("tcp/{}", crate::cell::vc_name(label)))?;
                find(&conn::SERIES, name).map(|q| code(2 + i as u64, q))
            }
        }
    }
    fn sample(&self, index: u64) -> f64 {
        match crate::series::split(index) {
            (0, 0) => self.cpu_time as f64,
            (0, 1) => self.udp_rx as f64,
            (1, q) => self.nic.quantity(q),
            (e, q) if e >= 2 => self.conns.get(e as usize - 2).map_or(f64::NAN, |c| c.sample(q)),
            _ => f64::NAN,
        }
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.nic.reset_stats(now);
        self.ping_tx = 0;
        self.ping_rx = 0;
        self.rtt.reset();
        self.udp_tx = 0;
        self.udp_rx = 0;
        self.pdus_rx = 0;
        self.pdus_drop = [0; 3];
        self.ip_drop = 0;
        self.since = now;
        self.cpu_base = self.cpu_time;
        for c in &mut self.conns {
            c.reset_stats();
        }
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { f64::NAN };
        if self.app == "ping" {
            out.push(path, "ping_tx", "count", self.ping_tx as f64, "1");
            out.push(path, "ping_rx", "count", self.ping_rx as f64, "1");
            let loss = if self.ping_tx > 0 { 1.0 - self.ping_rx as f64 / self.ping_tx as f64 } else { f64::NAN };
            out.push(path, "ping_loss", "value", loss, "1");
            self.rtt.report(out, path, "ping_rtt", "s", 1e-12);
        }
        if self.app == "udp" {
            out.push(path, "udp_tx", "count", self.udp_tx as f64, "1");
            out.push(path, "udp_tx", "rate", per_s(self.udp_tx), "1/s");
        }
        out.push(path, "udp_rx", "count", self.udp_rx as f64, "1");
        out.push(path, "udp_rx", "rate", per_s(self.udp_rx), "1/s");
        out.push(path, "aal5_rx_pdus", "count", self.pdus_rx as f64, "1");
        out.push(path, "aal5_drop_pdus", "count", self.pdus_drop.iter().sum::<u64>() as f64, "1");
        for (i, cause) in ["length", "crc", "timeout"].iter().enumerate() {
            out.push(path, "aal5_drop_pdus", cause, self.pdus_drop[i] as f64, "1");
        }
        out.push(path, "ip_drop_datagrams", "count", (self.ip_drop + self.partials.len() as u64) as f64, "1");
        if !self.conns.is_empty() {
            // CPU time is booked when a segment starts; count only what has elapsed.
            let pending = if self.cpu_busy { self.cpu_cost.0 } else { 0 };
            let busy = (self.cpu_time - self.cpu_base).saturating_sub(pending);
            out.push(path, "cpu_util", "value", if secs > 0.0 { busy as f64 * 1e-12 / secs } else { f64::NAN }, "1");
            out.push(path, "tcp_strays", "count", self.tcp_strays as f64, "1");
            for c in &self.conns {
                c.report(secs, path, out);
            }
            // What all of this host's ttcp -r receivers got together (one run, one number).
            let rx: u64 = self.conns.iter().filter(|c| matches!(c.ep, Endpoint::Recv(_))).map(|c| c.bytes() - c.base_bytes).sum();
            if self.conns.iter().any(|c| matches!(c.ep, Endpoint::Recv(_))) {
                out.push(path, "tcp_throughput", "rx_total", if secs > 0.0 { rx as f64 * 8.0 / secs } else { f64::NAN }, "b/s");
            }
        }
        self.nic.report(now, &format!("{path}/nic"), out);
    }
    fn ledger(&self, l: &mut Ledger) {
        l.add_generated(self.flow, self.generated);
        self.nic.ledger(l);
        for p in &self.pacers {
            p.ledger(l);
        }
        for &(cause, flow, n) in &self.aal_dropped {
            l.add_dropped(if cause == "length" { "aal5_length" } else if cause == "crc" { "aal5_crc" } else { "aal5_timeout" }, flow, n);
        }
        for (_, r) in &self.reassembly {
            if let Some((flow, n)) = r.held() {
                l.add_in_flight(flow, n as u64);
            }
        }
        for (f, &n) in self.delivered_by_flow.iter().enumerate() {
            l.add_delivered(f as u32, n);
        }
    }
    fn source_flow(&self) -> Option<(u32, u32)> {
        Some((self.flow(), self.vc()))
    }
}

/// The `host` kind's declarations (registered in `lib.rs`).
pub const KIND: crate::kind::KindInfo = crate::kind::KindInfo {
    kind: "host",
    help: "workstation: IPv4 over AAL5 (LLC/SNAP, MTU, fragmentation) on an ATM interface; ping, echo replies, UDP blaster; TCP Reno (4.3BSD timers) ttcp senders/receivers on a CPU with per-segment overhead; per-VC adapter pacers",
    source: "RFC 1577/1483/791; domingo95 section 3 (ping, ttcp -u); lazarou96 Table 1 (TCP, host CPU)",
    params: &[&crate::host::PARAMS, &crate::host::conn::PARAMS],
    inputs: &crate::kind::IN_ONE,
    outputs: &crate::kind::OUT,
    ports: Some(|_| crate::kind::Ports { inputs: vec![crate::kind::PortDecl::new("in", false, false)], outputs: vec![crate::kind::PortDecl::new("out", false, true)] }),
    probes: &[&crate::host::PROBES, &crate::host::conn::PROBES, &crate::link::transmitter::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::host::SERIES }, crate::series::KindSeries { at: "nic", series: &crate::link::transmitter::SERIES }, crate::series::KindSeries { at: "tcp/vc<N>", series: &crate::host::conn::SERIES }],
    is_source: true,
};
