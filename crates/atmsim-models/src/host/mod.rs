//! Hosts: IPv4 over AAL5 (RFC 1577 / RFC 1483 LLC/SNAP) on an ATM interface.
//!
//! ```text
//!          ping / echo / UDP blaster                      TCP connections (ttcp)
//!                    │                                           │
//!        IPv4 (MTU, fragmentation, reassembly)     CPU (per-segment overhead)
//!                    │  + 8 octets LLC/SNAP                      │
//!        AAL5 SAR (segment; reassemble per VC)  ◄────────────────┘
//!                    │
//!   in ──► [ interface: cells of a PDU leave back to back at the line rate,
//!            or spaced at `peak`; per-VC adapter pacers ] ──► line_length ──► out
//! ```
//!
//! One component holds the whole stack, so a host costs one dispatch per cell. The
//! stack is built from parts, each a sans-IO module with its own tests, that other
//! composite models reuse (docs/models/host.md, "Parts"):
//!
//! - [`app::App`] — ping, echo replies, UDP blaster: what to send when, RTTs, counters;
//! - [`ip`] — sizes and fragmentation, [`ip::Ident`], [`ip::IpReassembly`];
//! - [`crate::aal::sar::Segmenter`] and [`crate::aal::sar::VcReassembly`] — AAL5 SAR;
//! - [`cpu::Cpu`] — the CPU server the TCP segments queue for;
//! - [`conn::Conn`] over [`tcp`] — the TCP connections (sans-IO Reno state machines);
//! - [`crate::control::pacer::Pacer`] and [`crate::link::transmitter::Transmitter`] —
//!   the adapter's pacers and the interface (NIC).
//!
//! `Host` is the glue: it routes between the parts and owns their timer tags. The
//! protocol logic is plain functions over metadata: an IP datagram of `L` octets
//! (20-octet header included) larger than the MTU is cut into fragments carrying
//! `floor((MTU − 20) / 8) · 8` octets of data each (RFC 791); each IP packet plus
//! 8 octets of LLC/SNAP is one AAL5 PDU of `ceil((len + 8 trailer) / 48)` cells.
//!
//! What a receiver must learn from bytes it never sees travels as a payload on the
//! last cell of each PDU: the IP packet's IPv4 header (addresses, protocol,
//! identification, fragment offset, more-fragments) and, on a datagram's first
//! fragment, its transport header (ICMP echo, UDP or TCP) — inserted at segmentation,
//! taken on arrival. `Cell::seq` is only the segmenter's PDU number. An echo reply
//! mirrors the request's fragments cell for cell (same offsets and sizes), as ICMP
//! echo returns the data it got.

pub mod app;
pub mod conn;
pub mod cpu;
pub mod ip;
pub mod tcp;

use crate::kind::{BuildInfo, Cx};
use atmsim_kernel::PortId;

use rand::Rng;

use atmsim_kernel::probe::{ProbeKind, ProbeSpec, Report};
use atmsim_kernel::{Ledger, Rate, SimDuration, SimTime, Stream};

use crate::aal::sar::{Pdu, Segmenter, VcReassembly};
use crate::cell::Cell;
use crate::control::credit::CreditGate;
use crate::control::pacer::Pacer;
use crate::link::transmitter::{CellBuffer, LineRateParams, Transmitter, PHY_NAMES};
use crate::params::{fibre_delay, ParamIssue, ParamSpec, ParamType, Params};
use crate::payload::Payload;
use crate::series::SeriesDecl;
use crate::observe::{observe, Control, Observation};
use crate::part::{At, Part};
use app::{App, AppConfig, AppKind};
use crate::traffic::sink::SinkParams;
use atmsim_kernel::SeriesKind;
use atmsim_kernel::units::Size;
use conn::{Conn, TcpParams};
use cpu::Cpu;
use atmsim_kernel::rate::CELL_BITS;
use ip::{Ident, IpReassembly, Kind, Piece, ICMP_HEADER, RECEIVER, SENDER, TTCP_PORT, TTL, UDP_HEADER};
use crate::payload::L4;
use atmsim_wire::icmp::IcmpEchoRepr;
use atmsim_wire::ipv4::Ipv4Repr;
use atmsim_wire::udp::UdpRepr;
use tcp::Segment;

pub const PARAMS: [ParamSpec; 22] = [
    ParamSpec { name: "credit_window", ty: ParamType::Size, default: None, required: false, help: "hop-by-hop credit flow control on the adapter: each VC the host sends on starts with this many credits (cells; the downstream node's buffer for it) and sends a cell only while it holds credit; credit cells arriving on 'in' feed the credit (one entry per cell cycle); VCs need VPI 0, VCI 1 ... 4095; default: no credit control", source: "evans96 (credit flow control, the upstream node's linecard); the window is atmsim convention" },
    ParamSpec { name: "phy", ty: ParamType::Choice(&PHY_NAMES), default: None, required: false, help: "interface line rate (default OC-3c; or give rate)", source: "SBus OC-3c adapters in domingo95 and lazarou96" },
    ParamSpec { name: "rate", ty: ParamType::Rate, default: None, required: false, help: "interface cell rate instead of phy", source: "" },
    ParamSpec { name: "line_length", ty: ParamType::Length, default: Some("0 m"), required: false, help: "fibre length of the interface's line: propagation at 5 µs/km after the interface's transmission (the interface is the line's transmitter: no link of the same rate behind it, which would serialise each cell twice)", source: "SPEC section 3 (5 µs/km); 0: the next component is at the host" },
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
    ParamSpec { name: "pcap", ty: ParamType::Text, default: None, required: false, help: "capture file: every AAL5 PDU the host sends or receives whole, written as a libpcap file (link type SUNATM: VPI/VCI, direction, LLC/SNAP, IPv4, TCP/UDP/ICMP headers with real checksums, zero data) for tcpdump or Wireshark; the path is relative to the working directory, {run} in it becomes the run number; default: no capture", source: "atmsim convention (docs/models/host.md, \"Capture\")" },
    ParamSpec { name: "pcap_snaplen", ty: ParamType::Size, default: Some("128 B"), required: false, help: "capture: octets kept of each PDU, the 4-octet SunATM header included (as tcpdump -s; the record keeps the PDU's full length); 16 B to 256 KiB", source: "atmsim convention: 128 octets hold LLC/SNAP, IPv4 and TCP headers with options" },
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
    ProbeSpec { name: "ping_rtt", unit: "s", kind: ProbeKind::Tally, help: "round-trip times of the replies (count, mean, std, min, max; with delay_quantiles also p50, p90, p99, p99_9, p99_99, p99_999)" },
    ProbeSpec { name: "udp_tx", unit: "1", kind: ProbeKind::Counter, help: "UDP datagrams sent (count; rate in datagrams/s)" },
    ProbeSpec { name: "udp_rx", unit: "1", kind: ProbeKind::Counter, help: "UDP datagrams received whole (count; rate)" },
    ProbeSpec { name: "udp_delay", unit: "s", kind: ProbeKind::Tally, help: "when a UDP datagram arrived: one-way delay of the datagrams received whole, from the sender's application handing each to IP to its reassembly here (count, mean, std, min, max; with delay_quantiles also p50 … p99_999)" },
    ProbeSpec { name: "non_ip_pdus", unit: "1", kind: ProbeKind::Counter, help: "whole AAL5 PDUs that carried no IP packet (cells of a plain cell source sent to the host), discarded (count)" },
    ProbeSpec { name: "ip_drop_datagrams", unit: "1", kind: ProbeKind::Counter, help: "IP datagrams never completed because a fragment was lost (count at the end of the run, including pending ones)" },
];

/// The host's timers, as typed keys. Each is one kernel tag (the values the host has
/// always used, so that runs keep their traces): [`HostTimer::tag`] encodes,
/// [`HostTimer::of`] decodes, and a tag that is none of them is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum HostTimer {
    /// The application's next ping or datagram.
    App,
    /// The AAL5 segmenter's next PDU.
    Sar,
    /// The interface transmitter's own timers (its two tags).
    Nic(u32),
    /// The CPU finished a segment.
    Cpu,
    /// BSD's 500 ms and 200 ms TCP timers.
    Slow,
    Fast,
    /// The TCP connections open.
    TcpStart,
    /// The adapter's credit gate's cell cycle.
    Gate,
    /// Adapter pacer `i`'s release.
    Pacer(u32),
    /// Connection `i`'s fine TCP timer.
    Conn(u32),
}

/// Tags from here on are pacers', and from [`CONN_TAGS`] on connections'.
const PACER_TAGS: u32 = 1 << 16;
const CONN_TAGS: u32 = 2 << 16;
/// The interface transmitter's first tag (it uses this and the next).
const NIC_TAG: u32 = 2;

impl HostTimer {
    const fn tag(self) -> u32 {
        match self {
            HostTimer::App => 0,
            HostTimer::Sar => 1,
            HostTimer::Nic(t) => t,
            HostTimer::Cpu => 4,
            HostTimer::Slow => 5,
            HostTimer::Fast => 6,
            HostTimer::TcpStart => 7,
            HostTimer::Gate => 8,
            HostTimer::Pacer(i) => PACER_TAGS + i,
            HostTimer::Conn(i) => CONN_TAGS + i,
        }
    }

    fn of(tag: u32) -> Option<HostTimer> {
        Some(match tag {
            0 => HostTimer::App,
            1 => HostTimer::Sar,
            t @ (NIC_TAG | 3) => HostTimer::Nic(t),
            4 => HostTimer::Cpu,
            5 => HostTimer::Slow,
            6 => HostTimer::Fast,
            7 => HostTimer::TcpStart,
            8 => HostTimer::Gate,
            t if t >= CONN_TAGS => HostTimer::Conn(t - CONN_TAGS),
            t if t >= PACER_TAGS => HostTimer::Pacer(t - PACER_TAGS),
            _ => return None,
        })
    }
}

/// The host's parts, listed once: runs `$body` with `$place` (where under the host's
/// path its series are: "" for the host's own, `nic`, or a connection's `tcp/vc<N>`) and
/// `$p` (the part) for each, in report order; `mut` visits them mutably. The host
/// delegates its statistics reset, probe rows, ledger and series to them alike
/// ([`crate::part::Part`]).
macro_rules! host_parts {
    ($h:expr, mut |$place:ident, $p:ident| $body:block) => { host_parts!(@each [mut] $h, |$place, $p| $body) };
    ($h:expr, |$place:ident, $p:ident| $body:block) => { host_parts!(@each [] $h, |$place, $p| $body) };
    (@each [$($m:tt)?] $h:expr, |$place:ident, $p:ident| $body:block) => {{
        { let $place: &str = ""; let $p = & $($m)? $h.app; $body }
        { let $place: &str = ""; let $p = & $($m)? $h.aal; $body }
        { let $place: &str = ""; let $p = & $($m)? $h.ip; $body }
        { let $place: &str = ""; let $p = & $($m)? $h.cpu; $body }
        for $p in & $($m)? $h.conns {
            let name = $p.name();
            let $place: &str = &name;
            $body
        }
        { let $place: &str = "nic"; let $p = & $($m)? $h.nic; $body }
        if let Some($p) = & $($m)? $h.gate {
            let $place: &str = "nic";
            let $p = & $($m)? **$p;
            $body
        }
        { let $place: &str = ""; let $p = & $($m)? $h.sar; $body }
        for $p in & $($m)? $h.pacers {
            let $place: &str = "";
            $body
        }
    }};
}


/// Work for the host CPU: one TCP segment to send or to process.
#[derive(Clone, Copy, Debug)]
struct Job {
    conn: u16,
    rx: bool,
    seg: Segment,
}

/// A workstation: the host stack composed of its parts (see the module docs); the
/// `host` kind.
#[derive(Clone, Debug)]
pub struct Host {
    flow: u32,
    vc: u32,
    mtu: usize,
    /// Ping, echo replies, UDP blaster.
    app: App,
    /// The IP identification counter (every datagram the host sends takes one).
    ident: Ident,
    /// IP fragment reassembly.
    ip: IpReassembly,
    /// AAL5 segmentation (the SAR delay per PDU).
    sar: Segmenter,
    /// AAL5 reassembly per VC.
    aal: VcReassembly,
    /// The CPU the TCP segments queue for.
    cpu: Cpu<Job>,
    conns: Vec<Conn>,
    /// Segments a connection just produced (scratch, always empty between handlers).
    segs: Vec<Segment>,
    tcp_strays: u64,
    /// Whole PDUs that carried no IP headers (cells from a plain source), discarded.
    non_ip: u64,
    timer_phase: SimDuration,
    slow_tick: SimDuration,
    fast_tick: SimDuration,
    tcp_start: SimTime,
    /// The adapter's per-VC pacers (index: `Conn::pacer`).
    pacers: Vec<Pacer>,
    /// The interface.
    nic: Transmitter,
    /// Credit flow control in front of the interface (None: none).
    gate: Option<Box<CreditGate>>,
    since: SimTime,
}

/// The `app` choices, as the application they run.
const APPS: [(&str, AppKind); 3] = [("none", AppKind::None), ("ping", AppKind::Ping), ("udp", AppKind::Udp)];

/// A size given in octets (a size in cells is refused: IP counts octets).
pub(crate) fn octets(size: Size, key: &str) -> Result<usize, ParamIssue> {
    match size {
        Size::Bytes(b) => Ok(b.round() as usize),
        Size::Cells(_) => Err(ParamIssue::new(key, "give octets, e.g. \"1500 B\"")),
    }
}

/// The `host` kind's parameters, bound (its TCP options: [`conn::TcpParams`]).
#[derive(Clone, Debug, PartialEq)]
pub struct HostParams {
    /// The interface line rate (`phy` or `rate`; neither: OC-3c).
    pub line: LineRateParams,
    /// Fibre after the interface (m).
    pub line_length: f64,
    /// The adapter's peak cell rate (None: cells of a PDU leave back to back).
    pub peak: Option<Rate>,
    /// The VC ping and UDP send on.
    pub vc: Option<u32>,
    pub mtu: Size,
    pub sar_delay: SimDuration,
    pub reassembly_timeout: SimDuration,
    pub ip_reassembly_timeout: SimDuration,
    pub app: AppKind,
    pub count: u64,
    pub interval: SimDuration,
    pub length: Size,
    pub timeout: SimDuration,
    pub udp_rate: Option<Rate>,
    /// `udp_spacing = "poisson"`.
    pub udp_poisson: bool,
    pub start: SimDuration,
    /// None: never.
    pub stop: Option<SimDuration>,
    pub reply: bool,
    pub tcp: TcpParams,
    /// Credits each VC starts with (None: no credit flow control).
    pub credit_window: Option<u64>,
    /// The capture file (None: no capture).
    pub pcap: Option<String>,
    pub pcap_snaplen: Size,
    /// `delay_quantiles` and `delay_digits` (the sink's declarations): ping's RTTs and
    /// the received UDP datagrams' delays kept as distributions.
    pub delays: SinkParams,
}

/// What the parameters come to once checked against each other.
struct Resolved {
    rate: Rate,
    mtu: usize,
    length: usize,
    udp_gap: Option<SimDuration>,
    tcp_cfg: tcp::Config,
    conns: Vec<Conn>,
    /// The credit gate's window and VCIs.
    credit: Option<(u64, Vec<u16>)>,
}

impl HostParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(HostParams {
            line: LineRateParams::bind(p)?,
            peak: p.opt("peak", Params::rate)?,
            vc: p.opt("vc", Params::int)?.map(|v| v as u32),
            mtu: p.need("mtu", Params::size)?,
            sar_delay: p.need("sar_delay", Params::time)?,
            reassembly_timeout: p.need("reassembly_timeout", Params::time)?,
            ip_reassembly_timeout: p.need("ip_reassembly_timeout", Params::time)?,
            app: p.need_choice("app", &APPS)?,
            count: p.need("count", Params::int)? as u64,
            interval: p.need("interval", Params::time)?,
            length: p.need("length", Params::size)?,
            timeout: p.need("timeout", Params::time)?,
            udp_rate: p.opt("udp_rate", Params::rate)?,
            udp_poisson: p.need_choice("udp_spacing", &[("periodic", false), ("poisson", true)])?,
            start: p.need("start", Params::time)?,
            stop: p.opt("stop", Params::time)?,
            reply: p.need("reply", Params::bool)?,
            tcp: TcpParams::bind(p)?,
            credit_window: p.opt("credit_window", Params::cells)?,
            line_length: p.need("line_length", Params::length)?,
            pcap: p.opt("pcap", Params::word)?.map(str::to_string),
            pcap_snaplen: p.need("pcap_snaplen", Params::size)?,
            delays: SinkParams::bind(p)?,
        })
    }

    /// The checks of the parameters against each other.
    pub fn validate(&self) -> Result<(), ParamIssue> {
        self.resolve()?;
        self.delays.validate()
    }

    /// The values the parameters come to, checked in one order (the first problem is
    /// the one reported).
    fn resolve(&self) -> Result<Resolved, ParamIssue> {
        // The interface rate's default (OC-3c when neither phy nor rate is given) is
        // written here only (see the help of `phy`).
        let line = self.line.rate(Some("OC-3c"))?;
        let rate = match self.peak {
            Some(pk) if above(pk, line) => {
                return Err(ParamIssue::new("peak", format!(
                    "{:.6} Mb/s is above the line's {:.6} Mb/s of cells: the adapter cannot space cells wider than back to back; give at most the line rate, or leave peak out",
                    pk.bps() / 1e6, line.bps() / 1e6)));
            }
            Some(pk) if pk < line => pk,
            _ => line,
        };
        let mtu = octets(self.mtu, "mtu")?;
        if mtu < 68 {
            return Err(ParamIssue::new("mtu", "an IPv4 MTU is at least 68 octets (RFC 791)"));
        }
        let length = octets(self.length, "length")?;
        let udp_gap = match (self.app, self.udp_rate) {
            (AppKind::Udp, None) => return Err(ParamIssue::new("udp_rate", "app = \"udp\" needs udp_rate")),
            (AppKind::Udp, Some(r)) => Some(udp_gap(r, length, mtu, rate)?),
            _ => None,
        };
        if self.app == AppKind::Ping && length + ICMP_HEADER + ip::IP_HEADER > 65_535 {
            return Err(ParamIssue::new("length", "an IPv4 datagram is at most 65,535 octets"));
        }
        if self.app != AppKind::None && self.vc.is_none() {
            let app = APPS.iter().find(|a| a.1 == self.app).map_or("", |a| a.0);
            return Err(ParamIssue::new("vc", format!("app = \"{app}\" needs the vc it sends on")));
        }
        let tcp_cfg = self.tcp.config(mtu)?;
        let conns = self.tcp.conns(&tcp_cfg)?;
        if let Some(fast) = conns.iter().filter_map(|c| c.pace).find(|&p| above(p, rate)) {
            let unit = crate::control::pacer::UNITS.iter().find(|u| u.1 == self.tcp.pace_unit).map_or("", |u| u.0);
            return Err(ParamIssue::new("tcp", format!(
                "a pace comes to {:.6} Mb/s of cells (pace_unit = \"{}\"), above the {:.6} Mb/s of cells the host sends at: the pacer would never hold a cell; give a pace the line can carry",
                fast.bps() / 1e6, unit, rate.bps() / 1e6)));
        }
        let credit = match self.credit_window {
            None => None,
            Some(0) => return Err(ParamIssue::new("credit_window", "0 cells: a VC without credit never sends; give 1 cell or more")),
            Some(w) => {
                let mut vcis = Vec::new();
                // The TCP connections' VCs and the one ping, UDP and echo replies use.
                let labels = conns.iter().map(|c| c.out_vc).chain(self.vc);
                for l in labels {
                    let vci = (l >> 16 == 0 && (1..=u32::from(atmsim_wire::credit::MAX_VCI)).contains(&(l & 0xffff))).then_some((l & 0xffff) as u16);
                    let vci = vci.ok_or_else(|| ParamIssue::new("credit_window", format!("the host sends on {}, which a credit entry cannot name; credit-controlled VCs need VPI 0 and a VCI from 1 to 4095", crate::cell::vc_name(l))))?;
                    if !vcis.contains(&vci) {
                        vcis.push(vci);
                    }
                }
                Some((w, vcis))
            }
        };
        if let Some(path) = &self.pcap {
            self.check_capture(path, &conns)?;
        }
        Ok(Resolved { rate, mtu, length, udp_gap, tcp_cfg, conns, credit })
    }

    /// A capture's snap length in octets, as `pcap_snaplen` gives it.
    fn snaplen(&self) -> Result<usize, ParamIssue> {
        let n = octets(self.pcap_snaplen, "pcap_snaplen")?;
        if !(16..=262_144).contains(&n) {
            return Err(ParamIssue::new("pcap_snaplen", format!("{n} octets is out of range; give 16 B to 256 KiB")));
        }
        Ok(n)
    }

    /// The checks of a capture: its directory exists, its snap length, VPIs SunATM can hold.
    fn check_capture(&self, path: &str, conns: &[Conn]) -> Result<(), ParamIssue> {
        let dir = std::path::Path::new(path).parent().filter(|d| !d.as_os_str().is_empty());
        if let Some(d) = dir.filter(|d| !d.is_dir()) {
            return Err(ParamIssue::new("pcap", format!("the directory {} does not exist; give a file in an existing directory", d.display())));
        }
        self.snaplen()?;
        let labels = conns.iter().flat_map(|c| [c.out_vc, c.in_vc]).chain(self.vc);
        if let Some(l) = labels.into_iter().find(|l| l >> 16 > 255) {
            return Err(ParamIssue::new("pcap", format!("the host uses {}, whose VPI does not fit the capture format's one octet (SunATM); captured hosts need VPIs 0 to 255", crate::cell::vc_name(l))));
        }
        Ok(())
    }
}

/// The capture a host's parameters ask for: the file (with `{run}` replaced by `run`)
/// and the snap length in octets; None without `pcap`. The run opens it
/// ([`crate::capture::Capture::open`]) before the host starts.
pub fn capture_file(p: &Params, run: u64) -> Result<Option<(String, usize)>, ParamIssue> {
    let params = HostParams::bind(p)?;
    let Some(path) = &params.pcap else { return Ok(None) };
    Ok(Some((path.replace("{run}", &run.to_string()), params.snaplen()?)))
}

/// Whether rate `a` is above `b` beyond rounding (a setting equal to the line is fine).
fn above(a: Rate, b: Rate) -> bool {
    a.bps() > b.bps() * (1.0 + 1e-9)
}

/// The time between `length`-octet UDP datagrams sent at `r` (IP layer), refused when
/// their cells (every fragment's PDU) do not fit on the host's `line`: the interface
/// queue would grow without end, where a real host drops or blocks the sender.
fn udp_gap(r: Rate, length: usize, mtu: usize, line: Rate) -> Result<SimDuration, ParamIssue> {
    let datagram_bits = (8 * (length + UDP_HEADER + ip::IP_HEADER)) as u64;
    let gap = r.time_for_bits(datagram_bits);
    let cells: u64 = ip::fragment_cells(length + UDP_HEADER, mtu).iter().map(|&c| u64::from(c)).sum();
    let busy = line.time_for_bits(cells * CELL_BITS);
    if gap < busy {
        let mbps = |bits: u64, d: SimDuration| bits as f64 / (d.0 as f64 * 1e-12) / 1e6;
        return Err(ParamIssue::new("udp_rate", format!(
            "{:.6} Mb/s of {length}-octet datagrams ({cells} cells each) is {:.6} Mb/s of cells, above the {:.6} Mb/s of cells the host sends at: its queue would grow without end; give at most {:.6} Mb/s",
            r.bps() / 1e6, mbps(cells * CELL_BITS, gap), line.bps() / 1e6, mbps(datagram_bits, busy))));
    }
    Ok(gap)
}

impl Host {
    pub fn new(params: HostParams, flow: u32, rng: Stream, mut timer_rng: Stream) -> Result<Self, ParamIssue> {
        let Resolved { rate, mtu, length, udp_gap, tcp_cfg, mut conns, credit } = params.resolve()?;
        let mut pacers = Vec::new();
        for c in conns.iter_mut() {
            c.arrivals = atmsim_kernel::Distribution::new(params.delays.delay_digits);
            if let Some(r) = c.pace {
                c.pacer = Some(pacers.len());
                pacers.push(Pacer::new(r));
            }
        }
        // The timer phase's default (uniform in one second, per run) is drawn here only.
        let timer_phase = match params.tcp.timer_phase {
            Some(t) => t,
            None => SimDuration((timer_rng.random::<f64>() * 1e12) as u64),
        };
        let app_cfg = AppConfig {
            kind: params.app,
            count: params.count,
            interval: params.interval,
            length,
            timeout: params.timeout,
            udp_gap,
            udp_poisson: params.udp_poisson,
            start: SimTime::ZERO.plus(params.start),
            stop: params.stop.map_or(SimTime::MAX, |d| SimTime::ZERO.plus(d)),
            reply: params.reply,
            quantile_digits: params.delays.delay_digits,
        };
        Ok(Host {
            flow,
            // A host without vc (no ping or UDP) is listed as a source on label 0.
            vc: params.vc.unwrap_or(0),
            mtu,
            app: App::new(app_cfg, rng),
            ident: Ident::default(),
            ip: IpReassembly::new(params.ip_reassembly_timeout),
            sar: Segmenter::new(flow, params.sar_delay),
            aal: VcReassembly::new(params.reassembly_timeout),
            cpu: Cpu::with_per_octet(params.tcp.overhead(), params.tcp.per_octet()).with_switch_cost(params.tcp.tcp_conn_switch),
            conns,
            segs: Vec::new(),
            tcp_strays: 0,
            non_ip: 0,
            timer_phase,
            slow_tick: tcp_cfg.slow_tick,
            fast_tick: tcp_cfg.fast_tick,
            tcp_start: SimTime::ZERO.plus(params.tcp.tcp_start),
            pacers,
            nic: Transmitter::with(rate, CellBuffer::fifo(None), fibre_delay(params.line_length), 0, NIC_TAG),
            // The gate's cell cycle is the interface's (its peak rate when one is set).
            gate: credit.map(|(w, vcis)| Box::new(CreditGate::new(rate, &vcis, w))),
            since: SimTime::ZERO,
        })
    }

    pub fn flow(&self) -> u32 {
        self.flow
    }
    pub fn vc(&self) -> u32 {
        self.vc
    }

    // --- application and IP ---

    /// The application's timer fired: IP sends what it asks for, then its next tick is
    /// armed.
    fn app_tick(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        if !self.app.fire(now) {
            return;
        }
        let tick = self.app.tick(now);
        if let Some(s) = tick.send {
            // Echo requests and UDP datagrams go from the starting end to its peer.
            let port = 1024 + (self.vc & 0x7fff) as u16;
            let l4 = match s.kind {
                Kind::Udp => L4::Udp(UdpRepr { src_port: port, dst_port: TTCP_PORT, payload_len: s.data }),
                _ => L4::Echo(IcmpEchoRepr { reply: s.kind == Kind::EchoReply, ident: port, seq: s.id.unwrap_or(0) as u16, data_len: s.data }),
            };
            let header = if s.kind == Kind::Udp { UDP_HEADER } else { ICMP_HEADER };
            let pieces = ip::pieces(header + s.data, self.mtu);
            self.send_datagram(SENDER, RECEIVER, l4, &pieces, now, ctx);
        }
        if let Some(at) = tick.next {
            self.app.arm(at, HostTimer::App.tag(), ctx);
        }
    }

    /// Queues for SAR the PDUs of one datagram from `src` to `dst` carrying `l4`, cut
    /// at `pieces` (each IP packet's headers ride on its PDU's last cell), under the
    /// host's next IP identification.
    fn send_datagram(&mut self, src: [u8; 4], dst: [u8; 4], l4: L4, pieces: &[Piece], born: SimTime, ctx: &mut Cx<'_>) {
        let Some(protocol) = ip::protocol(&l4) else { return };
        let head = Ipv4Repr { src, dst, protocol, payload_len: 0, ttl: TTL, ident: self.ident.take(), dont_frag: false, more_frags: false, frag_offset: 0, tos: 0 };
        for (ip, l4, cells) in ip::fragment(&head, l4, pieces) {
            let pdu = Pdu { born, vc: self.vc, seq: 0, cells, last_payload: Some(Payload::Ip { ip, l4 }), pacer: None };
            self.sar.enqueue(pdu, HostTimer::Sar.tag(), ctx);
        }
    }

    /// A fragment arrived whole: IP reassembles; a whole datagram goes to the
    /// application, which may answer (an echo reply mirrors the request's fragments).
    fn ip_input(&mut self, flow: u32, ip: &Ipv4Repr, l4: L4, cells: u16, born: SimTime, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let Some(d) = self.ip.input(now, flow, ip, l4, cells, born) else { return };
        let Some(kind) = Kind::of(&d.l4) else { return };
        let seq = match d.l4 {
            L4::Echo(e) => e.seq,
            _ => 0,
        };
        if let (Some(Kind::EchoReply), L4::Echo(e)) = (self.app.on_datagram(now, kind, seq, d.born), d.l4) {
            let reply = L4::Echo(IcmpEchoRepr { reply: true, ..e });
            self.send_datagram(d.ip.dst, d.ip.src, reply, &d.pieces, now, ctx);
        }
    }

    // --- AAL5 segmentation, pacers, interface ---

    /// The SAR timer fired: the due PDUs leave as cells (the last cell of a TCP
    /// segment's PDU carrying its headers), into their pacer or the interface.
    fn sar_tick(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        if !self.sar.fire(now) {
            return;
        }
        let flow = self.sar.flow();
        while let Some(p) = self.sar.pop(now) {
            for mut c in p.cells(flow) {
                if let (true, Some(h)) = (c.is_eop(), p.last_payload) {
                    c.payload = ctx.store().payloads.insert(h);
                    observe(Observation::PduSent { cell: &c, payload: &h }, ctx);
                }
                match p.pacer {
                    Some(k) => self.pacers[k as usize].enqueue(c, HostTimer::Pacer(k as u32).tag(), ctx),
                    None => self.enter_interface(c, ctx),
                }
            }
        }
        self.sar.rearm(HostTimer::Sar.tag(), ctx);
    }

    fn pacer_release(&mut self, i: usize, ctx: &mut Cx<'_>) {
        let Some(p) = self.pacers.get_mut(i) else { return };
        if let Some(cell) = p.release(HostTimer::Pacer(i as u32).tag(), ctx) {
            self.enter_interface(cell, ctx);
        }
    }

    /// A cell for the interface, through the credit gate if there is one.
    #[inline]
    fn enter_interface(&mut self, cell: Cell, ctx: &mut Cx<'_>) {
        let Some(g) = self.gate.as_mut() else { return self.nic.accept(cell, ctx) };
        if let Err(c) = g.enqueue(cell) {
            // Not a VC the host was told to send on (an echo reply of a host without
            // `vc`, on label 0): sent without credit, as the adapter has none for it.
            return self.nic.accept(c, ctx);
        }
        if let Some(at) = g.wake(ctx.now) {
            ctx.schedule_at(at, HostTimer::Gate.tag());
        }
    }

    /// The gate's cell cycle: the cell it may send goes to the interface.
    fn gate_slot(&mut self, ctx: &mut Cx<'_>) {
        let Some(g) = self.gate.as_mut() else { return };
        let (cell, next) = g.on_slot();
        if let Some(at) = next {
            ctx.schedule_at(at, HostTimer::Gate.tag());
        }
        if let Some(cell) = cell {
            self.nic.accept(cell, ctx);
        }
    }

    /// A credit cell arrived: its entries feed the gate (`--check-wire` round-trips it).
    #[cold]
    fn credit_input(&mut self, cell: &Cell, credit: &atmsim_wire::credit::CreditCellRepr, ctx: &mut Cx<'_>) {
        if !observe(Observation::Control { cell, control: Control::CreditCell(credit) }, ctx) {
            return;
        }
        let Some(g) = self.gate.as_mut() else { return };
        g.on_credit(cell.flow, credit.entries());
        if let Some(at) = g.wake(ctx.now) {
            ctx.schedule_at(at, HostTimer::Gate.tag());
        }
    }

    // --- TCP connections and the CPU ---

    /// A whole TCP segment arrived on `cell.vc` (`cell` is its last cell): queue it for
    /// the CPU of the connection receiving on that VC.
    fn tcp_input(&mut self, cell: &Cell, tcp: &atmsim_wire::tcp::TcpRepr, ctx: &mut Cx<'_>) {
        let Some(i) = self.conns.iter().position(|c| c.in_vc == cell.vc) else {
            self.tcp_strays += 1;
            return;
        };
        self.conns[i].arrivals.add(ctx.now.since(cell.born).0);
        let (near_seq, near_ack) = self.conns[i].near();
        let seg = Segment::from_repr(tcp, near_seq, near_ack);
        self.cpu.push_keyed(Job { conn: i as u16, rx: true, seg }, seg.len as u64, i as u64);
        self.cpu.kick(HostTimer::Cpu.tag(), ctx);
    }

    /// Moves the segments a connection just produced onto the CPU queue and re-arms its
    /// fine timer.
    fn queue_output(&mut self, i: usize, ctx: &mut Cx<'_>) {
        for seg in self.segs.drain(..) {
            self.cpu.push_keyed(Job { conn: i as u16, rx: false, seg }, seg.len as u64, i as u64);
        }
        let c = &mut self.conns[i];
        if let Some(d) = c.deadline() {
            c.timer.arm_earliest(d.max(ctx.now), HostTimer::Conn(i as u32).tag(), ctx);
        }
        self.cpu.kick(HostTimer::Cpu.tag(), ctx);
    }

    /// The CPU finished the segment at the head of its queue.
    fn cpu_done(&mut self, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let Some(job) = self.cpu.complete(now) else { return };
        let i = job.conn as usize;
        if job.rx {
            self.conns[i].input(&job.seg, now, &mut self.segs);
            self.queue_output(i, ctx);
        } else {
            self.send_segment(i, &job.seg, ctx);
        }
        self.cpu.kick(HostTimer::Cpu.tag(), ctx);
    }

    /// Hands one segment to AAL5: one PDU (TCP segments are never fragmented), its
    /// headers riding on the last cell.
    fn send_segment(&mut self, i: usize, seg: &Segment, ctx: &mut Cx<'_>) {
        let id = self.ident.take();
        let c = &self.conns[i];
        let cells = ip::pdu_cells(seg.ip_len());
        let headers = c.headers(seg, id);
        let pdu = Pdu { born: ctx.now, vc: c.out_vc, seq: 0, cells, last_payload: Some(headers), pacer: c.pacer.map(|p| p as u16) };
        self.sar.enqueue(pdu, HostTimer::Sar.tag(), ctx);
    }

    fn tcp_tick(&mut self, slow: bool, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        let (every, key) = if slow { (self.slow_tick, HostTimer::Slow) } else { (self.fast_tick, HostTimer::Fast) };
        ctx.schedule_in(every, key.tag());
        for i in 0..self.conns.len() {
            self.conns[i].tick(slow, now, &mut self.segs);
            if !self.segs.is_empty() {
                self.queue_output(i, ctx);
            }
        }
    }
}

impl crate::kind::Kind for Host {
    fn build(p: &Params, b: &BuildInfo) -> Result<Self, ParamIssue> {
        let params = HostParams::bind(p)?;
        params.validate()?;
        Host::new(params, b.flow, b.stream("app"), b.stream("tcp_timers"))
    }
    fn start(&mut self, ctx: &mut Cx<'_>) {
        self.nic.trace_from(ctx);
        self.app.start(HostTimer::App.tag(), ctx);
        if !self.conns.is_empty() {
            ctx.schedule_at(self.tcp_start, HostTimer::TcpStart.tag());
            // BSD's timers run from boot: the first ticks fall at the phase, then periodically.
            let slow = SimDuration(self.timer_phase.0 % self.slow_tick.0);
            let fast = SimDuration(self.timer_phase.0 % self.fast_tick.0);
            ctx.schedule_at(SimTime::ZERO.plus(slow), HostTimer::Slow.tag());
            ctx.schedule_at(SimTime::ZERO.plus(fast), HostTimer::Fast.tag());
        }
    }
    fn on_cell(&mut self, _port: PortId, cell: Cell, ctx: &mut Cx<'_>) {
        let now = ctx.now;
        // The host consumes every cell it gets: a payload is taken out of the store
        // whether or not its PDU completes.
        let headers = if cell.payload.is_some() { ctx.store().payloads.take(cell.payload) } else { None };
        if let (Some(Payload::Credit(c)), true) = (&headers, self.gate.is_some()) {
            return self.credit_input(&cell, c, ctx);
        }
        let Some(whole) = self.aal.on_cell(&cell, now) else { return };
        let Some(Payload::Ip { ip, l4 }) = headers else {
            self.non_ip += 1;
            return;
        };
        if !observe(Observation::PduReceived { cell: &cell, payload: &Payload::Ip { ip, l4 } }, ctx) {
            return;
        }
        match l4 {
            L4::Tcp(tcp) => self.tcp_input(&cell, &tcp, ctx),
            _ => self.ip_input(cell.flow, &ip, l4, whole.cells as u16, whole.born, ctx),
        }
    }
    fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        let Some(key) = HostTimer::of(tag) else { return ctx.fail(format!("host: timer tag {tag} is none of the host's")) };
        match key {
            HostTimer::App => self.app_tick(ctx),
            HostTimer::Sar => self.sar_tick(ctx),
            HostTimer::Cpu => self.cpu_done(ctx),
            HostTimer::Slow => self.tcp_tick(true, ctx),
            HostTimer::Fast => self.tcp_tick(false, ctx),
            HostTimer::Gate => self.gate_slot(ctx),
            HostTimer::TcpStart => {
                let now = ctx.now;
                for i in 0..self.conns.len() {
                    self.conns[i].start(now, &mut self.segs);
                    self.queue_output(i, ctx);
                }
            }
            HostTimer::Conn(i) => {
                let now = ctx.now;
                let Some(c) = self.conns.get_mut(i as usize) else { return };
                c.on_timer(now, &mut self.segs);
                self.queue_output(i as usize, ctx);
            }
            HostTimer::Pacer(i) => self.pacer_release(i as usize, ctx),
            HostTimer::Nic(t) => self.nic.tick(t, ctx),
        }
    }
    /// The index of series `name` at `sub` (`""`, `nic`, `tcp/vc<N>`), if any: the
    /// part that samples it, and its place in that part's series.
    fn series_index(&self, sub: &str, name: &str) -> Option<u64> {
        let mut k = 0u64;
        let mut found = None;
        host_parts!(self, |place, p| {
            if found.is_none() && place == sub {
                found = crate::series::find(Part::series(p), name).map(|q| crate::series::code(k, q));
            }
            k += 1;
        });
        found
    }
    fn sample(&self, index: u64) -> f64 {
        let (part, q) = crate::series::split(index);
        let mut k = 0u64;
        let mut value = f64::NAN;
        host_parts!(self, |_place, p| {
            if k == part {
                value = Part::sample(p, q);
            }
            k += 1;
        });
        value
    }
    fn reset_stats(&mut self, now: SimTime) {
        self.since = now;
        host_parts!(self, mut |_place, p| { Part::reset_stats(p, now) });
    }
    fn report(&self, now: SimTime, path: &str, out: &mut Report) {
        let secs = now.since(self.since).as_secs_f64();
        out.push(path, "non_ip_pdus", "count", self.non_ip as f64, "1");
        if !self.conns.is_empty() {
            // CPU time is booked when a segment starts; count only what has elapsed.
            out.push(path, "cpu_util", "value", self.cpu.utilization(secs), "1");
            out.push(path, "tcp_strays", "count", self.tcp_strays as f64, "1");
            // What all of this host's ttcp -r receivers got together (one run, one number).
            let rx: u64 = self.conns.iter().map(|c| c.delivered_since_reset()).sum();
            if self.conns.iter().any(|c| c.is_receiver()) {
                out.push(path, "tcp_throughput", "rx_total", if secs > 0.0 { rx as f64 * 8.0 / secs } else { f64::NAN }, "b/s");
            }
        }
        let nic = format!("{path}/nic");
        host_parts!(self, |place, p| {
            let at = At { now, secs, path: if place == "nic" { &nic } else { path } };
            Part::report(p, &at, out)
        });
    }
    fn ledger(&self, l: &mut Ledger) {
        host_parts!(self, |_place, p| { Part::ledger(p, l) });
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
    params: &[&crate::host::PARAMS, &crate::host::conn::PARAMS, &crate::traffic::sink::PARAMS],
    inputs: &crate::kind::IN_ONE,
    outputs: &crate::kind::OUT,
    ports: Some(|_| crate::kind::Ports { inputs: vec![crate::kind::PortDecl::new("in", false, false)], outputs: vec![crate::kind::PortDecl::new("out", false, true)] }),
    probes: &[&crate::host::PROBES, &crate::aal::sar::PROBES, &crate::host::conn::PROBES, &crate::link::transmitter::PROBES, &crate::control::credit::gate::PROBES],
    series: &[crate::series::KindSeries { at: "", series: &crate::host::SERIES }, crate::series::KindSeries { at: "nic", series: &crate::link::transmitter::SERIES }, crate::series::KindSeries { at: "tcp/vc<N>", series: &crate::host::conn::SERIES }],
    is_source: true,
    forwards_only: false,
    rates: crate::kind::Rates::NONE,
    observed: crate::kind::Observed { capture: Some(capture_file), stations: None },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::{default_raw, parse_value, Value};

    /// The parameters as the loader gives them: the declared defaults, then `given`.
    fn loaded(given: &[(&'static str, Value)]) -> Params {
        let mut p = Params::default();
        for spec in PARAMS.iter().chain(conn::PARAMS.iter()).chain(crate::traffic::sink::PARAMS.iter()) {
            if let Some(d) = spec.default {
                p.values.insert(spec.name, parse_value(spec, &default_raw(d)).unwrap());
            }
        }
        for (k, v) in given {
            p.values.insert(k, v.clone());
        }
        p
    }

    #[test]
    fn host_parameters_bind_once_and_missing_ones_are_internal_errors() {
        assert_eq!(HostParams::bind(&Params::default()).map(drop), Err(ParamIssue::new("mtu", "missing")));
        let params = HostParams::bind(&loaded(&[])).unwrap();
        assert_eq!((params.app, params.count, params.tcp.machine_us, params.tcp.dupack_threshold), (AppKind::None, 100, 250, 3));
        assert_eq!(params.tcp.overhead(), SimDuration(250_000_000));
        params.validate().unwrap();
        // The same checks, in the same order, as before binding.
        let p = loaded(&[("mss", Value::Size(Size::Cells(10.0))), ("app", Value::Word("udp".into()))]);
        assert_eq!(HostParams::bind(&p).unwrap().validate(), Err(ParamIssue::new("udp_rate", "app = \"udp\" needs udp_rate")));
        let p = loaded(&[("mss", Value::Size(Size::Cells(10.0)))]);
        assert_eq!(HostParams::bind(&p).unwrap().validate(), Err(ParamIssue::new("mss", "give octets, e.g. \"1500 B\"")));
        let p = loaded(&[("app", Value::Word("ping".into()))]);
        assert_eq!(HostParams::bind(&p).unwrap().validate(), Err(ParamIssue::new("vc", "app = \"ping\" needs the vc it sends on")));
    }

    /// The typed keys encode to the tags the host has always used (a run's trace, which
    /// the golden fingerprints pin, schedules these numbers), and decode back; a tag that
    /// is none of them is refused.
    #[test]
    fn timer_keys_round_trip_through_the_hosts_tags() {
        let keys = [
            (HostTimer::App, 0),
            (HostTimer::Sar, 1),
            (HostTimer::Nic(2), 2),
            (HostTimer::Nic(3), 3),
            (HostTimer::Cpu, 4),
            (HostTimer::Slow, 5),
            (HostTimer::Fast, 6),
            (HostTimer::TcpStart, 7),
            (HostTimer::Gate, 8),
            (HostTimer::Pacer(0), 1 << 16),
            (HostTimer::Pacer(7), (1 << 16) + 7),
            (HostTimer::Conn(0), 2 << 16),
            (HostTimer::Conn(41), (2 << 16) + 41),
        ];
        for (key, tag) in keys {
            assert_eq!(key.tag(), tag, "{key:?}");
            assert_eq!(HostTimer::of(tag), Some(key), "{tag}");
        }
        assert_eq!(HostTimer::of(9), None);
        assert_eq!(HostTimer::of((1 << 16) - 1), None);
    }
}
