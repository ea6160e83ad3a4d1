//! A host's TCP connections: their declaration in a scenario, their parameters and the
//! per-connection probes. The protocol itself is in [`super::tcp`].
//!
//! A connection is one `ttcp` transfer over a pair of PVCs, or a bulk transfer each way
//! over one connection:
//!
//! ```text
//! tcp = ["send 0/101 ack 0/201 window 128 KiB pace 70 Mb/s",   # ttcp -t: data out on 0/101, ACKs in on 0/201
//!        "recv 0/301 ack 0/401",                               # ttcp -r: data in on 0/301, ACKs out on 0/401
//!        "duplex 0/501 ack 0/601"]                             # data out on 0/501, data in on 0/601; ACKs ride on data
//! ```
//!
//! Labels are the ones this host sees (switches may translate them on the way).
//! `window` sets both socket buffers (ttcp -b) and overrides the host's `window`;
//! `sndbuf` then sets the sending socket buffer alone (Moldeklev & Gunningberg's
//! buffer combinations);
//! `pace` puts a pacer on the outgoing VC in the adapter; `bytes` limits the transfer.
//! A `duplex` connection is one TCP connection whose two ends both send: each end's
//! data segments carry its acknowledgement of the other's data (4.3BSD piggybacking:
//! a segment sent clears a delayed ACK), and ACK-only segments go out only when no data
//! does. Its sending half reports under `tcp/<out VC>`, its receiving half under
//! `tcp/<in VC>`; duplex connections start established (no handshake).

use atmsim_wire::ipv4::{Ipv4Repr, PROTOCOL_TCP};
use crate::payload::{Payload, L4};
use super::ip::{RECEIVER, SENDER, TTCP_PORT};
use crate::timer::Timer;
use super::tcp::Segment;
use atmsim_kernel::units::{parse_quantity, Dimension, Quantity, Size};
use atmsim_kernel::{Distribution, Rate, SimDuration, SimTime};

use super::tcp::{Config, Receiver, Sender, Timers, F_ACK, F_DATA, F_SYN, HEADERS, MAX_WINDOW};
use crate::series::SeriesDecl;
use atmsim_kernel::SeriesKind;
use crate::cell::{parse_vc_label, vc_name};
use crate::params::{ParamIssue, ParamSpec, ParamType, Params};

/// Per-segment TCP processing + OS overhead of the machines in lazarou96 Table 1.
pub const MACHINES: [(&str, u64); 4] = [("dec3000", 250), ("sgi", 550), ("sparc10", 550), ("sparc5", 700)];
pub const MACHINE_NAMES: [&str; 4] = ["dec3000", "sgi", "sparc10", "sparc5"];

/// Time for one pass over one octet of data (a copy or a checksum), ps, by machine,
/// *beyond* Table 1's per-segment time: the data-touching cost a profile multiplies by
/// its passes. For the DEC 3000, the SGI and the SPARCstation 10 Table 1's times already
/// cover a whole 9,140-octet segment (a SPARCstation 10 received 71.5 Mb/s in lazarou96
/// Table 3, which 550 µs per segment allows and any large extra per-octet cost would
/// not), so they add nothing. The SPARCstation 5 under SunOS 4 is slower than a DS-3
/// (lazarou96 4.5: "the maximum throughput of SPARC 5 with SunOS 4 is less than the
/// DS-3 rate"), which Table 1's 700 µs alone (104 Mb/s) does not make it: 50 ns per
/// octet per pass (20 MB/s, the microSPARC-II's memory-copy rate as published for it is
/// of that order) × 3 passes + 700 µs send a 9,140-octet segment in 2.07 ms, 35 Mb/s.
/// docs/models/host.md, "Host profiles"; the reproductions' bands vary these.
pub const OCTET_PASS_PS: [(&str, u64); 4] = [("dec3000", 0), ("sgi", 0), ("sparc10", 0), ("sparc5", 50_000)];

/// A host's TCP/IP stack as a named parameter set (docs/models/host.md, "Host
/// profiles"): what differs between the BSD-derived stacks of the papers' hosts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Reno fast recovery after a fast retransmit (false: Tahoe, slow start).
    pub fast_recovery: bool,
    /// Passes over each data octet the stack makes per segment sent or received
    /// (copy between user and kernel, checksum, programmed I/O to or from the adapter).
    pub passes: u64,
    /// The receiver's window update: a pure window-update ACK goes when the window
    /// opens by this percentage of the receive buffer (or by two segments).
    pub win_update_pct: u32,
    /// 4.3BSD-Tahoe's TCP code as SunOS 4.1.3 ships it (its `tcp_input.c`,
    /// `tcp_output.c`, `tcp_timer.c`, "from UCB 7.15.1.2 3/16/88" and kin): the RTO
    /// estimate `((srtt >> 2) + rttvar) >> 1`, congestion avoidance without Reno's extra
    /// `mss/8`, and a receiver that ACKs out-of-order segments only by the delayed-ACK
    /// timer. false: 4.3BSD-Reno's.
    pub tahoe: bool,
}

/// The profiles (`profile`): `table1` is lazarou96 Table 1's host as the model had it
/// (per-segment overhead only, 4.3BSD-Reno); the others add their stack's lineage and
/// data-touching passes.
pub const PROFILES: [(&str, Profile); 4] = [
    ("table1", Profile { fast_recovery: true, passes: 0, win_update_pct: 50, tahoe: false }),
    // OSF/1 (DEC 3000 AXP): networking from 4.3BSD-Reno; the OTTO moves data by DMA
    // and computes the AAL5 CRC: copy + TCP checksum.
    ("osf1", Profile { fast_recovery: true, passes: 2, win_update_pct: 50, tahoe: false }),
    // SunOS 4.1.x: 4.3BSD-Tahoe lineage (slow start, congestion avoidance, fast
    // retransmit; no fast recovery), Tahoe's 35% window-update rule, RTO estimate and
    // delayed ACK of out-of-order segments (checked against SunOS 4.1.3's netinet
    // sources); SBus adapters with programmed I/O: copy, checksum and the move to or
    // from the adapter.
    ("sunos41", Profile { fast_recovery: false, passes: 3, win_update_pct: 35, tahoe: true }),
    // IRIX 5.x (SGI Indigo 2, Onyx): 4.3BSD-Reno lineage; DMA adapters: copy + checksum.
    ("irix", Profile { fast_recovery: true, passes: 2, win_update_pct: 50, tahoe: false }),
];
pub const PROFILE_NAMES: [&str; 4] = ["table1", "osf1", "sunos41", "irix"];

pub const PARAMS: [ParamSpec; 26] = [
    ParamSpec { name: "tcp", ty: ParamType::StrList, default: None, required: false, help: "TCP connections: \"send VC ack VC [window SIZE] [sndbuf SIZE] [pace RATE] [bytes SIZE]\", \"recv VC ack VC [window SIZE]\", or \"duplex VC ack VC [window SIZE] [pace RATE] [bytes SIZE]\" (data both ways on one connection, ACKs piggybacked)", source: "ttcp -t / ttcp -r (lazarou96 4.2); 4.3BSD tcp_output (piggybacking)" },
    ParamSpec { name: "machine", ty: ParamType::Choice(&MACHINE_NAMES), default: Some("dec3000"), required: false, help: "workstation whose per-segment TCP + OS overhead applies: dec3000 250 us (200-300), sgi 550 us, sparc10 550 us, sparc5 700 us", source: "lazarou96 Table 1" },
    ParamSpec { name: "profile", ty: ParamType::Choice(&PROFILE_NAMES), default: Some("table1"), required: false, help: "the host's TCP/IP stack: table1 (lazarou96 Table 1: per-segment overhead only, 4.3BSD-Reno), osf1 (DEC OSF/1: Reno, 2 passes over the data), sunos41 (SunOS 4.1.x: Tahoe lineage, no fast recovery, 35% window update, Tahoe RTO, out-of-order segments ACKed by the delayed-ACK timer only, 3 passes), irix (IRIX 5: Reno, 2 passes)", source: "docs/models/host.md (Host profiles)" },
    ParamSpec { name: "tcp_per_octet", ty: ParamType::Time, default: None, required: false, help: "CPU time per octet of segment data sent or received (default: the profile's passes × the machine's time per pass beyond Table 1's: sparc5 50 ns, the others 0)", source: "docs/models/host.md (Host profiles)" },
    ParamSpec { name: "tcp_overhead", ty: ParamType::Time, default: None, required: false, help: "CPU time per TCP segment sent or received (overrides machine)", source: "lazarou96 Table 1" },
    ParamSpec { name: "tcp_conn_switch", ty: ParamType::Time, default: Some("0 s"), required: false, help: "extra CPU time of a segment whose connection differs from the one the CPU served last (PCB lookup on a cache miss, switching to another receiving process, cache refill); 0: no per-connection cost", source: "docs/models/host.md (Per-connection cost): no public figure for the MAGIC hosts, so 0" },
    ParamSpec { name: "window", ty: ParamType::Size, default: Some("64 KiB"), required: false, help: "socket send and receive buffers (the TCP window) of every connection without its own", source: "ttcp -b; lazarou96 uses 32 KB to 256 KB" },
    ParamSpec { name: "mss", ty: ParamType::Size, default: None, required: false, help: "TCP maximum segment size, octets (default MTU - 40)", source: "lazarou96 Table 1 (MTU 9180)" },
    ParamSpec { name: "timers", ty: ParamType::Choice(&["bsd", "fine"]), default: Some("bsd"), required: false, help: "bsd: 500 ms slow / 200 ms fast timer ticks; fine: exact timers (lazarou96's model without BSD timers)", source: "lazarou96 sections 3.2, 5" },
    ParamSpec { name: "slow_tick", ty: ParamType::Time, default: Some("500 ms"), required: false, help: "slow timer period (retransmission timer, RTT in ticks)", source: "lazarou96 Table 1" },
    ParamSpec { name: "fast_tick", ty: ParamType::Time, default: Some("200 ms"), required: false, help: "fast timer period (delayed ACKs)", source: "lazarou96 Table 1" },
    ParamSpec { name: "min_rto", ty: ParamType::Time, default: Some("1 s"), required: false, help: "minimum retransmission timeout", source: "lazarou96 Table 1" },
    ParamSpec { name: "max_rto", ty: ParamType::Time, default: Some("64 s"), required: false, help: "maximum retransmission timeout", source: "lazarou96 section 4.1 (Stevens)" },
    ParamSpec { name: "initial_rto", ty: ParamType::Time, default: Some("6 s"), required: false, help: "RTO before the first RTT sample", source: "4.4BSD tcp_newtcpcb (t_rxtcur = 12 ticks)" },
    ParamSpec { name: "delayed_ack", ty: ParamType::Bool, default: Some("true"), required: false, help: "delay ACKs (released by the fast timer, or every second full segment)", source: "4.3BSD-Reno" },
    ParamSpec { name: "delack_time", ty: ParamType::Time, default: Some("200 ms"), required: false, help: "with timers = \"fine\": how long an ACK may wait", source: "atmsim convention (one fast-timer period)" },
    ParamSpec { name: "fast_retransmit", ty: ParamType::Bool, default: Some("true"), required: false, help: "retransmit on the third duplicate ACK", source: "4.3BSD-Reno" },
    ParamSpec { name: "fast_recovery", ty: ParamType::Bool, default: None, required: false, help: "Reno fast recovery (false: Tahoe, slow start after a fast retransmit); default: the profile's (true but for sunos41)", source: "4.3BSD-Reno" },
    ParamSpec { name: "dupack_threshold", ty: ParamType::Int { min: 1, max: 100 }, default: Some("3"), required: false, help: "duplicate ACKs that trigger fast retransmit (tcprexmtthresh)", source: "4.3BSD-Reno" },
    ParamSpec { name: "ca_increment", ty: ParamType::Choice(&["reno", "rfc2581"]), default: None, required: false, help: "congestion-avoidance increment per ACK: reno = mss²/cwnd + mss/8 (4.3BSD-Reno), rfc2581 = mss²/cwnd (also 4.3BSD-Tahoe's); default: the profile's (reno but for sunos41)", source: "4.3BSD-Reno tcp_input; SunOS 4.1.3 tcp_input; RFC 2581" },
    ParamSpec { name: "slow_start", ty: ParamType::Bool, default: Some("true"), required: false, help: "slow start from one MSS at the start and after timeouts (false: the whole window at once, pre-1988 TCP)", source: "4.3BSD-Reno (Jacobson 1988)" },
    ParamSpec { name: "karn", ty: ParamType::Bool, default: Some("true"), required: false, help: "Karn's rule: no RTT sample across a retransmission", source: "4.3BSD-Reno (Karn & Partridge 1987)" },
    ParamSpec { name: "handshake", ty: ParamType::Bool, default: Some("false"), required: false, help: "open connections with a three-way handshake (off: they start established)", source: "lazarou96 section 5 (open/close left out)" },
    ParamSpec { name: "timer_phase", ty: ParamType::Time, default: None, required: false, help: "when the host's first slow/fast timer tick falls (default: uniform in one second, per run)", source: "atmsim convention (BSD timers run from boot)" },
    ParamSpec { name: "pace_unit", ty: ParamType::Choice(&crate::control::pacer::UNIT_NAMES), default: Some("payload"), required: false, help: "what a connection's `pace` rate counts: payload = the 48-octet cell payload (384 bits per cell), cell = whole 53-octet cells (424 bits)", source: "lazarou96 4.4 and evans96: docs/models/lazarou96.md (\"Pacing rate\")" },
    ParamSpec { name: "tcp_start", ty: ParamType::Time, default: Some("0 s"), required: false, help: "when senders start", source: "" },
];

pub const PROBES: [atmsim_kernel::ProbeSpec; 9] = {
    use atmsim_kernel::{ProbeKind, ProbeSpec};
    [
        ProbeSpec { name: "tcp_throughput", unit: "b/s", kind: ProbeKind::Gauge, help: "per connection: data octets acknowledged (sender) or delivered in order (receiver) × 8 / time (value; also count in octets); per host: rx_total over its receivers" },
        ProbeSpec { name: "tcp_segments", unit: "1", kind: ProbeKind::Counter, help: "per connection: segments sent (sender) or data segments received (count)" },
        ProbeSpec { name: "tcp_retransmits", unit: "1", kind: ProbeKind::Counter, help: "per sender: segments retransmitted (count)" },
        ProbeSpec { name: "tcp_timeouts", unit: "1", kind: ProbeKind::Counter, help: "per sender: retransmission timeouts (count)" },
        ProbeSpec { name: "tcp_fast_retransmits", unit: "1", kind: ProbeKind::Counter, help: "per sender: fast retransmits (count)" },
        ProbeSpec { name: "tcp_rtt", unit: "s", kind: ProbeKind::Gauge, help: "per sender at the end: smoothed RTT (srtt) and RTO (rto); with BSD timers both are the estimator's tick counts × 500 ms (a 40 ms path reads srtt ≈ 0.44 s), and rto includes any backoff" },
        ProbeSpec { name: "tcp_acks", unit: "1", kind: ProbeKind::Counter, help: "per receiver: ACKs sent (count; out_of_order and duplicate segments too)" },
        ProbeSpec { name: "tcp_segment_delay", unit: "s", kind: ProbeKind::Tally, help: "per connection end (rows under its name): one-way delay of the segments arriving there — data at a receiver, ACKs at a sender, both at a duplex end — from the sending host handing each to AAL5 (after its CPU time) to its last cell's arrival, before this host's CPU (count, mean, std, min, max; with delay_quantiles also p50 … p99_999)" },
        ProbeSpec { name: "cpu_util", unit: "1", kind: ProbeKind::Gauge, help: "fraction of time the host CPU spent on TCP segments (value)" },
    ]
};

/// One endpoint's role and state.
#[derive(Clone, Debug)]
pub enum Endpoint {
    Send(Sender),
    Recv(Receiver),
    /// Both: one connection carrying data each way.
    Duplex(Box<(Sender, Receiver)>),
}

/// Counters of one half of a connection, kept at the last statistics reset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Octets acknowledged (sending half) or delivered in order (receiving half).
    pub bytes: u64,
    /// Segments sent (sending half) or data segments received (receiving half).
    pub segments: u64,
    /// Retransmissions, timeouts, fast retransmits (sending half); ACKs, out-of-order
    /// and duplicate segments (receiving half).
    pub other: [u64; 3],
}

/// One connection at this host.
#[derive(Clone, Debug)]
pub struct Conn {
    pub ep: Endpoint,
    /// Label this endpoint sends on (data for a sender, ACKs for a receiver).
    pub out_vc: u32,
    /// Label it receives on.
    pub in_vc: u32,
    /// Index of the adapter pacer on `out_vc`.
    pub pacer: Option<usize>,
    /// The pacer's rate of whole cells (the `pace` setting read in `pace_unit`).
    pub pace: Option<Rate>,
    /// The connection's fine timer (one kernel event for its earliest deadline).
    pub timer: Timer,
    /// The sending and receiving halves' counters at the last statistics reset.
    pub base_tx: Counts,
    pub base_rx: Counts,
    /// One-way delays (ps) of the segments arriving at this end (data at a receiver,
    /// ACKs at a sender), from their PDU's birth to their last cell's arrival.
    pub arrivals: Distribution,
}

/// What a connection samples as time series (`<host>/tcp/vc<N>`).
pub const SERIES: [SeriesDecl; 6] = [
    SeriesDecl { name: "tcp_cwnd", unit: "B", kind: SeriesKind::Level, scale: 1.0, help: "congestion window at each instant (senders; NaN for receivers)" },
    SeriesDecl { name: "tcp_ssthresh", unit: "B", kind: SeriesKind::Level, scale: 1.0, help: "slow-start threshold at each instant (senders)" },
    SeriesDecl { name: "tcp_srtt", unit: "s", kind: SeriesKind::Level, scale: 1.0, help: "smoothed round-trip time at each instant (senders)" },
    SeriesDecl { name: "tcp_rto", unit: "s", kind: SeriesKind::Level, scale: 1.0, help: "retransmission timeout at each instant (senders)" },
    SeriesDecl { name: "tcp_throughput", unit: "b/s", kind: SeriesKind::Rate, scale: 8.0, help: "octets acknowledged (sender) or delivered in order (receiver) over each interval, in bits per second" },
    SeriesDecl { name: "tcp_retransmits", unit: "1/s", kind: SeriesKind::Rate, scale: 1.0, help: "segments retransmitted per second over each interval (senders)" },
];

impl Conn {
    /// The sending half, if this end sends data.
    pub fn sender(&self) -> Option<&Sender> {
        match &self.ep {
            Endpoint::Send(s) => Some(s),
            Endpoint::Duplex(d) => Some(&d.0),
            Endpoint::Recv(_) => None,
        }
    }

    /// The receiving half, if this end receives data.
    pub fn receiver(&self) -> Option<&Receiver> {
        match &self.ep {
            Endpoint::Recv(r) => Some(r),
            Endpoint::Duplex(d) => Some(&d.1),
            Endpoint::Send(_) => None,
        }
    }

    /// Quantity `q` of [`SERIES`] (a duplex connection's are its sending half's).
    pub fn sample(&self, q: usize) -> f64 {
        match (self.sender(), q) {
            (Some(s), 0) => s.cwnd as f64,
            (Some(s), 1) => s.ssthresh as f64,
            (Some(s), 2) => s.rtt_rto().0,
            (Some(s), 3) => s.rtt_rto().1,
            (Some(s), 4) => s.acked_bytes() as f64,
            (Some(s), 5) => s.stats.retransmitted as f64,
            (None, 4) => self.receiver().map_or(f64::NAN, |r| r.delivered() as f64),
            _ => f64::NAN,
        }
    }

    /// The name its series and (sending half's) rows go under: `tcp/<out VC>` for a
    /// sender or duplex connection, `tcp/<in VC>` for a receiver.
    pub fn name(&self) -> String {
        match self.ep {
            Endpoint::Send(_) | Endpoint::Duplex(_) => format!("tcp/{}", vc_name(self.out_vc)),
            Endpoint::Recv(_) => format!("tcp/{}", vc_name(self.in_vc)),
        }
    }

    /// The sending half's counters now.
    pub fn tx_counts(&self) -> Option<Counts> {
        self.sender().map(|s| Counts { bytes: s.acked_bytes(), segments: s.stats.segments, other: [s.stats.retransmitted, s.stats.timeouts, s.stats.fast_retransmits] })
    }

    /// The receiving half's counters now.
    pub fn rx_counts(&self) -> Option<Counts> {
        self.receiver().map(|r| Counts { bytes: r.delivered(), segments: r.stats.segments, other: [r.stats.acks, r.stats.out_of_order, r.stats.duplicates] })
    }

    /// Octets acknowledged (a sender; a duplex connection's sending half) or delivered
    /// (a receiver), the whole run.
    pub fn bytes(&self) -> u64 {
        self.tx_counts().or(self.rx_counts()).map_or(0, |c| c.bytes)
    }

    /// Octets delivered in order since the last reset (0 for a sender).
    pub fn delivered_since_reset(&self) -> u64 {
        self.rx_counts().map_or(0, |c| c.bytes - self.base_rx.bytes)
    }

    pub fn reset_stats(&mut self) {
        self.base_tx = self.tx_counts().unwrap_or_default();
        self.base_rx = self.rx_counts().unwrap_or_default();
        self.arrivals.reset();
    }

    /// The IPv4 and TCP headers of `seg` sent by this endpoint in IP datagram
    /// `ident`. Hosts have no IP addresses of their own yet: the data sender is
    /// [`SENDER`] and the receiver [`RECEIVER`], the receiver listens on port 5001
    /// (ttcp's) and the sender's port is 1024 + the data VCI, so each connection's headers are
    /// distinct and a reply's mirror its request's.
    pub fn headers(&self, seg: &Segment, ident: u16) -> Payload {
        let (src, dst, sport, dport) = match &self.ep {
            Endpoint::Send(_) => (SENDER, RECEIVER, 1024 + (self.out_vc & 0x7fff) as u16, TTCP_PORT),
            Endpoint::Recv(_) => (RECEIVER, SENDER, TTCP_PORT, 1024 + (self.in_vc & 0x7fff) as u16),
            // Both ends send: the one whose outgoing label is the smaller is 10.0.0.1.
            Endpoint::Duplex(_) => {
                let (a, b) = (1024 + (self.out_vc & 0x7fff) as u16, 1024 + (self.in_vc & 0x7fff) as u16);
                if self.out_vc < self.in_vc {
                    (SENDER, RECEIVER, a, b)
                } else {
                    (RECEIVER, SENDER, a, b)
                }
            }
        };
        let tcp = seg.to_repr(sport, dport);
        let ip = Ipv4Repr { src, dst, protocol: PROTOCOL_TCP, payload_len: tcp.buffer_len(), ttl: 64, ident, dont_frag: true, more_frags: false, frag_offset: 0, tos: 0 };
        Payload::Ip { ip, l4: L4::Tcp(tcp) }
    }

    /// The numbers near which incoming sequence numbers (the receiving half's
    /// `rcv_nxt`) and acknowledgement numbers (the sending half's `snd_una`) fall.
    pub fn near(&self) -> (u64, u64) {
        (self.receiver().map_or(0, |r| r.rcv_nxt), self.sender().map_or(0, |s| s.snd_una))
    }

    /// Starts the connection at `now`: a sender's first segments (SYN or data) into
    /// `out`; a receiver waits.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        match &mut self.ep {
            Endpoint::Send(s) => s.start(now, out),
            Endpoint::Duplex(d) => {
                let at = out.len();
                d.0.start(now, out);
                piggyback(&mut d.1, out, at);
            }
            Endpoint::Recv(_) => {}
        }
    }

    /// A segment for this endpoint was processed at `now`: what it answers into `out`.
    /// A duplex connection's receiving half takes the data, its sending half the ACK.
    pub fn input(&mut self, seg: &Segment, now: SimTime, out: &mut Vec<Segment>) {
        match &mut self.ep {
            Endpoint::Send(s) => s.input(seg, now, out),
            Endpoint::Recv(r) => r.input(seg, now, out),
            Endpoint::Duplex(d) => {
                let at = out.len();
                if seg.flags & F_DATA != 0 {
                    d.1.input(seg, now, out);
                }
                if seg.flags & F_ACK != 0 {
                    d.0.input(seg, now, out);
                }
                piggyback(&mut d.1, out, at);
            }
        }
    }

    /// A BSD timer tick at `now`: the slow one drives senders (retransmission), the
    /// fast one receivers (delayed ACKs); segments into `out`.
    pub fn tick(&mut self, slow: bool, now: SimTime, out: &mut Vec<Segment>) {
        match &mut self.ep {
            Endpoint::Send(s) if slow => s.slow_tick(now, out),
            Endpoint::Recv(r) if !slow => r.fast_tick(out),
            Endpoint::Duplex(d) => {
                let at = out.len();
                if slow {
                    d.0.slow_tick(now, out);
                } else {
                    d.1.fast_tick(out);
                }
                piggyback(&mut d.1, out, at);
            }
            _ => {}
        }
    }

    /// The fine timer's event fired at `now`. The state machines keep their own
    /// deadlines (sans-IO): a stale event finds nothing due, so it is handled like the
    /// armed one. Segments into `out`; re-arm with [`Conn::deadline`].
    pub fn on_timer(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.timer.fire(now);
        match &mut self.ep {
            Endpoint::Send(s) => s.on_deadline(now, out),
            Endpoint::Recv(r) => r.on_deadline(now, out),
            Endpoint::Duplex(d) => {
                let at = out.len();
                d.0.on_deadline(now, out);
                d.1.on_deadline(now, out);
                piggyback(&mut d.1, out, at);
            }
        }
    }

    /// Whether this endpoint receives data (ttcp -r, or a duplex connection).
    pub fn is_receiver(&self) -> bool {
        self.receiver().is_some()
    }

    /// The fine-timer deadline, if any.
    pub fn deadline(&self) -> Option<SimTime> {
        match &self.ep {
            Endpoint::Send(s) => s.deadline(),
            Endpoint::Recv(r) => r.deadline(),
            Endpoint::Duplex(d) => match (d.0.deadline(), d.1.deadline()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }

    /// Rows of the sending half under [`Conn::name`], of the receiving half under
    /// `tcp/<in VC>`.
    pub fn report(&self, secs: f64, path: &str, out: &mut atmsim_kernel::Report) {
        let rate = |bytes: u64| if secs > 0.0 { bytes as f64 * 8.0 / secs } else { f64::NAN };
        if let (Some(s), Some(c)) = (self.sender(), self.tx_counts()) {
            let p = format!("{path}/tcp/{}", vc_name(self.out_vc));
            let b = self.base_tx;
            out.push(&p, "tcp_throughput", "value", rate(c.bytes - b.bytes), "b/s");
            out.push(&p, "tcp_throughput", "count", (c.bytes - b.bytes) as f64, "B");
            out.push(&p, "tcp_segments", "count", (c.segments - b.segments) as f64, "1");
            out.push(&p, "tcp_retransmits", "count", (c.other[0] - b.other[0]) as f64, "1");
            out.push(&p, "tcp_timeouts", "count", (c.other[1] - b.other[1]) as f64, "1");
            out.push(&p, "tcp_fast_retransmits", "count", (c.other[2] - b.other[2]) as f64, "1");
            let (srtt, rto) = s.rtt_rto();
            out.push(&p, "tcp_rtt", "srtt", srtt, "s");
            out.push(&p, "tcp_rtt", "rto", rto, "s");
        }
        if let Some(c) = self.rx_counts() {
            let p = format!("{path}/tcp/{}", vc_name(self.in_vc));
            let b = self.base_rx;
            // A duplex connection's receiving half names its rows apart from the
            // sending half's (they may share a VC name when both directions use one label).
            let (value, count, segs) = if matches!(self.ep, Endpoint::Duplex(_)) { ("rx", "rx_count", "rx") } else { ("value", "count", "count") };
            out.push(&p, "tcp_throughput", value, rate(c.bytes - b.bytes), "b/s");
            out.push(&p, "tcp_throughput", count, (c.bytes - b.bytes) as f64, "B");
            out.push(&p, "tcp_segments", segs, (c.segments - b.segments) as f64, "1");
            out.push(&p, "tcp_acks", "count", (c.other[0] - b.other[0]) as f64, "1");
            out.push(&p, "tcp_acks", "out_of_order", (c.other[1] - b.other[1]) as f64, "1");
            out.push(&p, "tcp_acks", "duplicate", (c.other[2] - b.other[2]) as f64, "1");
            if let Endpoint::Duplex(d) = &self.ep {
                out.push(&p, "tcp_acks", "piggybacked", d.1.stats.piggybacked as f64, "1");
            }
        }
        if self.arrivals.tally().count() > 0 {
            self.arrivals.report(out, &format!("{path}/{}", self.name()), "tcp_segment_delay", "s", 1e-12);
        }
    }
}

/// 4.3BSD piggybacking for a duplex connection: every data segment in `out[at..]` (what
/// one step produced) carries the receiving half's acknowledgement and window, and the
/// ACK-only segments of the same step are then redundant (a data segment carries the
/// same or a later acknowledgement) and dropped.
fn piggyback(rcv: &mut Receiver, out: &mut Vec<Segment>, at: usize) {
    if !out[at..].iter().any(|s| s.flags & F_DATA != 0) {
        return;
    }
    let mut i = at;
    while i < out.len() {
        if out[i].flags & F_DATA != 0 {
            let (ack, win) = rcv.ack_fields();
            out[i].flags |= F_ACK;
            out[i].ack = ack;
            out[i].win = win;
            rcv.acked_by_output();
            i += 1;
        } else if out[i].flags & (F_ACK | F_SYN) == F_ACK {
            out.remove(i);
            rcv.stats.acks -= 1;
        } else {
            i += 1;
        }
    }
}

/// A size in octets from a `tcp` entry's field (the message names the text).
fn size_of(text: &str) -> Result<u64, String> {
    match parse_quantity(text, Dimension::Size) {
        Ok(Quantity::Size(Size::Bytes(b))) if b >= 1.0 => Ok(b.round() as u64),
        Ok(_) => Err(format!("'{text}': give octets, e.g. \"128 KiB\"")),
        Err(e) => Err(format!("'{text}': {e}")),
    }
}

/// A host's TCP connection options, bound (part of [`super::HostParams`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TcpParams {
    /// The `tcp` entries as written (checked by [`TcpParams::conns`]).
    pub tcp: Vec<String>,
    /// The per-segment overhead of `machine`, µs.
    pub machine_us: u64,
    /// The time per pass over an octet of `machine`, ps.
    pub machine_pass_ps: u64,
    pub profile: Profile,
    /// Overrides the profile's data-touching cost.
    pub tcp_per_octet: Option<SimDuration>,
    /// Overrides `machine`.
    pub tcp_overhead: Option<SimDuration>,
    /// Extra CPU time of a segment of another connection than the last one served.
    pub tcp_conn_switch: SimDuration,
    pub window: Size,
    /// None: MTU − 40.
    pub mss: Option<Size>,
    pub timers: Timers,
    pub slow_tick: SimDuration,
    pub fast_tick: SimDuration,
    pub min_rto: SimDuration,
    pub max_rto: SimDuration,
    pub initial_rto: SimDuration,
    pub delayed_ack: bool,
    pub delack_time: SimDuration,
    pub fast_retransmit: bool,
    /// None: the profile's.
    pub fast_recovery: Option<bool>,
    pub dupack_threshold: u32,
    /// `ca_increment = "reno"`; None: the profile's (Reno's extra but for Tahoe).
    pub ca_bsd_extra: Option<bool>,
    pub slow_start: bool,
    pub karn: bool,
    pub handshake: bool,
    /// None: uniform in one second, drawn per run by the host.
    pub timer_phase: Option<SimDuration>,
    pub tcp_start: SimDuration,
    /// What `pace` rates count.
    pub pace_unit: crate::control::pacer::PacingUnit,
}

impl TcpParams {
    /// Reads each parameter once, as declared (the loader has filled in the defaults).
    pub fn bind(p: &Params) -> Result<Self, ParamIssue> {
        Ok(TcpParams {
            tcp: p.opt_list("tcp")?.unwrap_or_default(),
            machine_us: p.need_choice("machine", &MACHINES)?,
            machine_pass_ps: p.need_choice("machine", &OCTET_PASS_PS)?,
            profile: p.need_choice("profile", &PROFILES)?,
            tcp_per_octet: p.opt("tcp_per_octet", Params::time)?,
            tcp_overhead: p.opt("tcp_overhead", Params::time)?,
            tcp_conn_switch: p.need("tcp_conn_switch", Params::time)?,
            window: p.need("window", Params::size)?,
            mss: p.opt("mss", Params::size)?,
            timers: p.need_choice("timers", &[("bsd", Timers::Bsd), ("fine", Timers::Fine)])?,
            slow_tick: p.need("slow_tick", Params::time)?,
            fast_tick: p.need("fast_tick", Params::time)?,
            min_rto: p.need("min_rto", Params::time)?,
            max_rto: p.need("max_rto", Params::time)?,
            initial_rto: p.need("initial_rto", Params::time)?,
            delayed_ack: p.need("delayed_ack", Params::bool)?,
            delack_time: p.need("delack_time", Params::time)?,
            fast_retransmit: p.need("fast_retransmit", Params::bool)?,
            fast_recovery: p.opt("fast_recovery", Params::bool)?,
            dupack_threshold: p.need("dupack_threshold", Params::int)? as u32,
            // A Choice: the loader has checked the word is "reno" or "rfc2581".
            ca_bsd_extra: p.opt("ca_increment", Params::word)?.map(|w| w == "reno"),
            slow_start: p.need("slow_start", Params::bool)?,
            karn: p.need("karn", Params::bool)?,
            handshake: p.need("handshake", Params::bool)?,
            timer_phase: p.opt("timer_phase", Params::time)?,
            tcp_start: p.need("tcp_start", Params::time)?,
            pace_unit: p.need_choice("pace_unit", &crate::control::pacer::UNITS)?,
        })
    }

    /// The checks of the parameters against each other and the host's MTU (octets).
    pub fn validate(&self, mtu: usize) -> Result<(), ParamIssue> {
        let cfg = self.config(mtu)?;
        self.conns(&cfg).map(drop)
    }

    /// The TCP configuration shared by the host's connections.
    pub fn config(&self, mtu: usize) -> Result<Config, ParamIssue> {
        // The MSS's default (MTU − 40, see its help) is computed here only.
        let mss = match self.mss {
            Some(s) => super::octets(s, "mss")? as u64,
            None => mtu.saturating_sub(HEADERS) as u64,
        };
        if mss == 0 || mss as usize + HEADERS > mtu || mss > u16::MAX as u64 {
            return Err(ParamIssue::new("mss", format!("must be 1 .. MTU - 40 = {} octets (a segment is never fragmented)", mtu.saturating_sub(HEADERS))));
        }
        let window = super::octets(self.window, "window")? as u64;
        let cfg = Config {
            mss: mss as u32,
            sndbuf: window,
            rcvbuf: window,
            bytes: None,
            timers: self.timers,
            slow_tick: self.slow_tick,
            fast_tick: self.fast_tick,
            min_rto: self.min_rto,
            max_rto: self.max_rto,
            initial_rto: self.initial_rto,
            delayed_ack: self.delayed_ack,
            delack_time: self.delack_time,
            fast_retransmit: self.fast_retransmit,
            fast_recovery: self.fast_recovery.unwrap_or(self.profile.fast_recovery),
            win_update_pct: self.profile.win_update_pct,
            dupack_threshold: self.dupack_threshold,
            handshake: self.handshake,
            ca_bsd_extra: self.ca_bsd_extra.unwrap_or(!self.profile.tahoe),
            rto_tahoe: self.profile.tahoe,
            ack_out_of_order: !self.profile.tahoe,
            slow_start: self.slow_start,
            karn: self.karn,
        };
        // A period far below any TCP's would only make the run crawl through empty ticks.
        const MIN_TICK: u64 = 1_000_000; // 1 µs
        for (key, d) in [("slow_tick", cfg.slow_tick), ("fast_tick", cfg.fast_tick)] {
            if d.0 < MIN_TICK {
                return Err(ParamIssue::new(key, "a timer period must be at least 1 us (BSD: 500 ms slow, 200 ms fast)"));
            }
        }
        if cfg.min_rto > cfg.max_rto {
            return Err(ParamIssue::new("min_rto", "must not exceed max_rto"));
        }
        check_window(window, mss).map_err(|m| ParamIssue::new("window", m))?;
        Ok(cfg)
    }

    /// The CPU time per segment: `tcp_overhead`, else the `machine`'s.
    pub fn overhead(&self) -> SimDuration {
        self.tcp_overhead.unwrap_or(SimDuration(self.machine_us * 1_000_000))
    }

    /// The CPU time per octet of segment data: `tcp_per_octet`, else the profile's
    /// passes × the machine's time per pass.
    pub fn per_octet(&self) -> SimDuration {
        self.tcp_per_octet.unwrap_or(SimDuration(self.profile.passes * self.machine_pass_ps))
    }

    /// The `tcp` entries as connections.
    pub fn conns(&self, base: &Config) -> Result<Vec<Conn>, ParamIssue> {
        let mut conns = parse(&self.tcp, base)?;
        for c in conns.iter_mut() {
            if let Some(setting) = c.pace {
                c.pace = Some(self.pace_unit.cell_rate(setting).ok_or_else(|| ParamIssue::new("tcp", "a pace rate is out of range"))?);
            }
        }
        Ok(conns)
    }
}

/// A window or send buffer of `window` octets is within what the connection can use;
/// the message says the range.
fn check_window(window: u64, mss: u64) -> Result<(), String> {
    if window < mss.min(2048) || window > MAX_WINDOW {
        return Err(format!("{window} octets; a window or send buffer must be {} .. {MAX_WINDOW} octets (window scale 2^4)", mss.min(2048)));
    }
    Ok(())
}

/// Parses the `tcp` list into connections.
fn parse(entries: &[String], base: &Config) -> Result<Vec<Conn>, ParamIssue> {
    let mut conns: Vec<Conn> = Vec::new();
    for (i, line) in entries.iter().enumerate() {
        let bad = |m: String| ParamIssue::new("tcp", format!("entry {} '{line}': {m}", i + 1));
        let toks: Vec<&str> = line.split_whitespace().collect();
        const KEYS: [&str; 8] = ["send", "recv", "duplex", "ack", "window", "sndbuf", "pace", "bytes"];
        let mut fields: Vec<(&str, String)> = Vec::new();
        for t in toks {
            if KEYS.contains(&t) {
                if fields.iter().any(|(k, _)| *k == t) {
                    return Err(bad(format!("'{t}' given twice")));
                }
                fields.push((t, String::new()));
            } else if let Some((_, v)) = fields.last_mut() {
                if !v.is_empty() {
                    v.push(' ');
                }
                v.push_str(t);
            } else {
                return Err(bad(format!("starts with '{t}'; expected send, recv or duplex")));
            }
        }
        let get = |k: &str| fields.iter().find(|(n, _)| *n == k).map(|(_, v)| v.as_str());
        let (role, first) = match (get("send"), get("recv"), get("duplex")) {
            (Some(v), None, None) => ("send", v),
            (None, Some(v), None) => ("recv", v),
            (None, None, Some(v)) => ("duplex", v),
            _ => return Err(bad("give exactly one of send VC, recv VC or duplex VC".into())),
        };
        let role_send = role != "recv";
        if role == "duplex" && base.handshake {
            return Err(bad("duplex connections start established: set handshake = false".into()));
        }
        let first = parse_vc_label(first).map_err(bad)?;
        let ack = parse_vc_label(get("ack").ok_or_else(|| bad("missing 'ack VC'".into()))?).map_err(bad)?;
        let mut cfg = base.clone();
        if let Some(w) = get("window") {
            let w = size_of(w).map_err(|m| bad(format!("window {m}")))?;
            check_window(w, cfg.mss as u64).map_err(|m| bad(format!("window {m}")))?;
            cfg.sndbuf = w;
            cfg.rcvbuf = w;
        }
        if let Some(w) = get("sndbuf") {
            if !role_send {
                return Err(bad("'sndbuf' applies to send or duplex (a receiver's buffer is its window)".into()));
            }
            let w = size_of(w).map_err(|m| bad(format!("sndbuf {m}")))?;
            check_window(w, cfg.mss as u64).map_err(|m| bad(format!("sndbuf {m}")))?;
            cfg.sndbuf = w;
        }
        if let Some(b) = get("bytes") {
            if !role_send {
                return Err(bad("'bytes' applies to send".into()));
            }
            cfg.bytes = Some(size_of(b).map_err(|m| bad(format!("bytes {m}")))?);
        }
        let pace = match get("pace") {
            None => None,
            Some(_) if !role_send => return Err(bad("'pace' applies to send (pace a receiver's ACK VC with a pacer component)".into())),
            Some(r) => match parse_quantity(r, Dimension::Rate) {
                Ok(Quantity::Rate(bps)) => Some(Rate::from_bps(bps).ok_or_else(|| bad(format!("pace '{r}' must be a positive rate")))?),
                Ok(_) => return Err(bad(format!("pace '{r}' is not a rate"))),
                Err(e) => return Err(bad(format!("pace '{r}': {e}"))),
            },
        };
        let (out_vc, in_vc) = if role_send { (first, ack) } else { (ack, first) };
        if conns.iter().any(|c| c.in_vc == in_vc) {
            return Err(bad(format!("another connection already receives on {}", vc_name(in_vc))));
        }
        if conns.iter().any(|c| c.out_vc == out_vc) {
            return Err(bad(format!("another connection already sends on {}", vc_name(out_vc))));
        }
        let ep = match role {
            "send" => Endpoint::Send(Sender::new(cfg)),
            "recv" => Endpoint::Recv(Receiver::new(cfg)),
            _ => Endpoint::Duplex(Box::new((Sender::new(cfg.clone()), Receiver::new(cfg)))),
        };
        conns.push(Conn { ep, out_vc, in_vc, pacer: None, pace, timer: Timer::default(), base_tx: Counts::default(), base_rx: Counts::default(), arrivals: Distribution::default() });
    }
    Ok(conns)
}

impl crate::part::Part for Conn {
    fn reset_stats(&mut self, _now: atmsim_kernel::SimTime) {
        Conn::reset_stats(self)
    }
    fn report(&self, at: &crate::part::At<'_>, out: &mut atmsim_kernel::Report) {
        Conn::report(self, at.secs, at.path, out)
    }
    fn series(&self) -> &'static [crate::series::SeriesDecl] {
        &SERIES
    }
    fn sample(&self, q: usize) -> f64 {
        Conn::sample(self, q)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tcp::Config;
    use super::*;

    fn conn(ep: Endpoint) -> Conn {
        Conn { ep, out_vc: 100, in_vc: 200, pacer: None, pace: None, timer: Timer::default(), base_tx: Counts::default(), base_rx: Counts::default(), arrivals: Distribution::default() }
    }

    #[test]
    fn a_sender_and_a_receiver_exchange_segments_through_the_conn_steps() {
        let cfg = Config::bsd(1000, 4000);
        let mut tx = conn(Endpoint::Send(Sender::new(cfg.clone())));
        let mut rx = conn(Endpoint::Recv(Receiver::new(cfg)));
        assert!(!tx.is_receiver() && rx.is_receiver());
        let (mut a, mut b) = (Vec::new(), Vec::new());
        rx.start(SimTime(0), &mut b);
        assert!(b.is_empty(), "a receiver waits");
        tx.start(SimTime(0), &mut a);
        assert_eq!(a.len(), 1, "slow start: one segment");
        // Wrong tick for each role: nothing.
        tx.tick(false, SimTime(1), &mut a);
        rx.tick(true, SimTime(1), &mut b);
        assert_eq!((a.len(), b.len()), (1, 0));
        rx.input(&a[0], SimTime(2), &mut b);
        // One segment: the ACK is delayed until the fast tick.
        assert!(b.is_empty());
        rx.tick(false, SimTime(3), &mut b);
        assert_eq!(b.len(), 1);
        a.clear();
        tx.input(&b[0], SimTime(4), &mut a);
        assert_eq!(tx.bytes(), 1000);
        assert_eq!(rx.bytes(), 1000);
        assert_eq!(a.len(), 2, "the window opened to two segments");
        // The headers of a segment name the connection's ports.
        let Payload::Ip { ip, l4: L4::Tcp(tcp) } = tx.headers(&a[0], 7) else { panic!("TCP headers") };
        assert_eq!((tcp.src_port, tcp.dst_port, ip.ident), (1124, 5001, 7));
    }

    #[test]
    fn a_duplex_connection_piggybacks_its_acks_on_data_as_4_3bsd_does() {
        let cfg = Config::bsd(1000, 8000);
        let duplex = || conn(Endpoint::Duplex(Box::new((Sender::new(cfg.clone()), Receiver::new(cfg.clone())))));
        let (mut a, mut b) = (duplex(), duplex());
        assert!(a.is_receiver() && a.sender().is_some());
        let (mut to_b, mut to_a) = (Vec::new(), Vec::new());
        a.start(SimTime(0), &mut to_b);
        b.start(SimTime(0), &mut to_a);
        // Slow start: one data segment each way, nothing to acknowledge yet (ACK 0 of
        // nothing received: rcv_nxt is the peer's first sequence number).
        assert_eq!((to_b.len(), to_a.len()), (1, 1));
        assert_eq!(to_b[0].flags, F_DATA | F_ACK);
        let first = to_b[0].ack;
        // Each end gets the other's segment: its ACK part acknowledges nothing new (no
        // duplicate ACK either: it carries data), its data is delayed-ACKed.
        let (sa, sb) = (to_a.remove(0), to_b.remove(0));
        a.input(&sa, SimTime(1), &mut to_b);
        b.input(&sb, SimTime(1), &mut to_a);
        assert!(to_b.is_empty() && to_a.is_empty(), "one segment in: the ACK is delayed");
        // A's fast tick would release the delayed ACK as an ACK-only segment...
        let mut lone = Vec::new();
        let mut a2 = a.clone();
        a2.tick(false, SimTime(2), &mut lone);
        assert_eq!(lone.len(), 1);
        assert_eq!((lone[0].flags, lone[0].ack), (F_ACK, first + 1000));
        // ... but if A sends data first, the data carries the ACK and none is owed.
        let Endpoint::Duplex(d) = &mut a.ep else { unreachable!() };
        d.0.snd_wnd = 8000;
        d.0.cwnd = 2000;
        let mut out = Vec::new();
        a.on_timer(SimTime(2), &mut out); // nothing due: no output
        assert!(out.is_empty());
        let Endpoint::Duplex(d) = &mut a.ep else { unreachable!() };
        let at = out.len();
        d.0.output(SimTime(2), &mut out);
        piggyback(&mut d.1, &mut out, at);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].flags, out[0].seq, out[0].ack), (F_DATA | F_ACK, first + 1000, first + 1000));
        a.tick(false, SimTime(3), &mut out);
        assert_eq!(out.len(), 1, "the delayed ACK went with the data");
        let rx = a.rx_counts().unwrap_or_default();
        let Endpoint::Duplex(d) = &a.ep else { unreachable!() };
        assert_eq!((rx.other[0], d.1.stats.piggybacked), (0, 2), "no ACK-only segment; two ACKs rode on data");
        // B takes the piggybacked segment: its data goes to the receiving half, its
        // ACK to the sending half (B's first segment is acknowledged).
        b.input(&out[0], SimTime(4), &mut to_a);
        assert_eq!(b.sender().map(|s| s.snd_una), Some(first + 1000));
        assert_eq!(b.receiver().map(|r| r.rcv_nxt), Some(first + 2000));
        assert_eq!((a.bytes(), b.bytes()), (0, 1000), "sending halves: octets acknowledged");
        assert_eq!((a.delivered_since_reset(), b.delivered_since_reset()), (1000, 2000));
        // B's window opened: its new data carries the ACK of A's two segments.
        assert!(!to_a.is_empty() && to_a.iter().all(|s| s.flags == F_DATA | F_ACK && s.ack == first + 2000));
    }

    /// The loader's view of the host parameters: declared defaults, then `given`.
    fn tcp_params(given: &[(&'static str, crate::params::Value)]) -> TcpParams {
        use crate::params::{default_raw, parse_value};
        let mut p = Params::default();
        for spec in PARAMS.iter() {
            if let Some(d) = spec.default {
                p.values.insert(spec.name, parse_value(spec, &default_raw(d)).unwrap());
            }
        }
        for (k, v) in given {
            p.values.insert(k, v.clone());
        }
        TcpParams::bind(&p).unwrap()
    }

    #[test]
    fn the_per_connection_cost_defaults_to_none_and_reads_a_time() {
        use crate::params::Value;
        assert_eq!(tcp_params(&[]).tcp_conn_switch, SimDuration(0));
        let t = tcp_params(&[("tcp_conn_switch", Value::Time(SimDuration(100_000_000)))]);
        assert_eq!(t.tcp_conn_switch, SimDuration(100_000_000));
    }

    #[test]
    fn a_profile_sets_the_lineage_and_the_data_touching_cost_per_machine() {
        use crate::params::Value;
        let word = |s: &str| Value::Word(s.into());
        // Default: Table 1 only (no per-octet cost, Reno).
        let t = tcp_params(&[]);
        assert_eq!((t.per_octet(), t.config(9180).unwrap().fast_recovery, t.config(9180).unwrap().win_update_pct), (SimDuration(0), true, 50));
        let c = t.config(9180).unwrap();
        assert_eq!((c.rto_tahoe, c.ca_bsd_extra, c.ack_out_of_order), (false, true, true));
        // SunOS 4.1 on a SPARC 5: 3 passes × 50 ns; Tahoe: no fast recovery, 35% rule.
        let t = tcp_params(&[("profile", word("sunos41")), ("machine", word("sparc5"))]);
        assert_eq!(t.per_octet(), SimDuration(150_000));
        let c = t.config(9180).unwrap();
        assert_eq!((c.fast_recovery, c.win_update_pct), (false, 35));
        // SunOS 4.1.3's Tahoe code: its RTO estimate, no extra mss/8, out-of-order
        // segments ACKed by the delayed-ACK timer only.
        assert_eq!((c.rto_tahoe, c.ca_bsd_extra, c.ack_out_of_order), (true, false, false));
        // A SPARC 5 then sends a 9,140-octet segment in 700 + 1,371 µs: 35.3 Mb/s, under
        // the 36 Mb/s a DS-3 carries (lazarou96 4.5 and Table 2).
        let secs = (t.overhead().0 + 9140 * t.per_octet().0) as f64 * 1e-12;
        assert!((9140.0 * 8.0 / secs / 1e6 - 35.31).abs() < 0.01);
        // Explicit values win over the profile's.
        let t = tcp_params(&[("profile", word("sunos41")), ("fast_recovery", Value::Bool(true)), ("tcp_per_octet", Value::Time(SimDuration(7_000)))]);
        assert_eq!((t.per_octet(), t.config(9180).unwrap().fast_recovery), (SimDuration(7_000), true));
        // OSF/1 on a DEC 3000: Table 1's 250 µs cover the data already.
        let t = tcp_params(&[("profile", word("osf1"))]);
        assert_eq!((t.per_octet(), t.config(9180).unwrap().fast_recovery), (SimDuration(0), true));
        // SunOS 4.1 on a SPARC 10 likewise; its Tahoe lineage still applies.
        let t = tcp_params(&[("profile", word("sunos41")), ("machine", word("sparc10"))]);
        assert_eq!((t.per_octet(), t.config(9180).unwrap().fast_recovery), (SimDuration(0), false));
    }

    #[test]
    fn sndbuf_sets_the_send_buffer_apart_from_the_window() {
        let base = Config::bsd(1000, 8000);
        let c = parse(&["send 0/101 ack 0/201 window 64 KiB sndbuf 16 KiB".to_string()], &base).expect("an entry");
        let Endpoint::Send(s) = &c[0].ep else { panic!("a sender") };
        assert_eq!((s.cfg.sndbuf, s.cfg.rcvbuf), (16_384, 65_536));
        let e = parse(&["recv 0/101 ack 0/201 sndbuf 16 KiB".to_string()], &base).map(drop).unwrap_err();
        assert!(e.msg.contains("'sndbuf' applies to send"), "{e:?}");
        // A size out of range names the entry and its key.
        let e = parse(&["send 0/101 ack 0/201 window 64 KiB".to_string(), "send 0/102 ack 0/202 sndbuf 1 B".to_string()], &base)
            .map(drop)
            .unwrap_err();
        assert!(e.msg.starts_with("entry 2 'send 0/102 ack 0/202 sndbuf 1 B': sndbuf 1 octets; a window or send buffer must be 1000 .."), "{e:?}");
        let e = parse(&["recv 0/101 ack 0/201 window 2 MiB".to_string()], &base).map(drop).unwrap_err();
        assert!(e.msg.contains("entry 1") && e.msg.contains("window 2097152 octets"), "{e:?}");
        let e = parse(&["send 0/101 ack 0/201 bytes 3 parsecs".to_string()], &base).map(drop).unwrap_err();
        assert!(e.msg.starts_with("entry 1 'send 0/101 ack 0/201 bytes 3 parsecs': bytes '3 parsecs': unknown unit"), "{e:?}");
    }

    #[test]
    fn duplex_entries_parse_and_refuse_a_handshake() {
        let base = Config::bsd(1000, 8000);
        let c = parse(&["duplex 0/101 ack 0/201 window 16 KiB".to_string()], &base).expect("a duplex entry");
        assert!(matches!(c[0].ep, Endpoint::Duplex(_)));
        assert_eq!((c[0].out_vc, c[0].in_vc, c[0].name()), (101, 201, "tcp/vc101".to_string()));
        let e = parse(&["duplex 0/101 recv 0/201".to_string()], &base).map(drop).unwrap_err();
        assert!(e.msg.contains("exactly one of send VC, recv VC or duplex VC"), "{e:?}");
        let hs = Config { handshake: true, ..base };
        let e = parse(&["duplex 0/101 ack 0/201".to_string()], &hs).map(drop).unwrap_err();
        assert!(e.msg.contains("set handshake = false"), "{e:?}");
    }
}
