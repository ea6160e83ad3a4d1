//! TCP Reno as in 4.3BSD-Reno (Stevens, *TCP/IP Illustrated* vol. 2, which documents the
//! 4.4BSD-Lite descendant of the same code), sans-IO: plain state machines fed segments and
//! clock ticks, returning the segments to send. The host model owns the CPU, the timers
//! and the wire.
//!
//! A connection carries data one way, as a `ttcp -t` → `ttcp -r` transfer does: the
//! [`Sender`] sends data and processes ACKs, the [`Receiver`] takes data and sends ACKs
//! (no piggybacking: the receiver has nothing to send). Sequence numbers are kept as
//! 64-bit counts internally (the wire carries the low 32 bits; see [`unwrap_seq`]).
//!
//! What is modelled, with the BSD variable names in the comments:
//! * slow start and congestion avoidance (`snd_cwnd`, `snd_ssthresh`; above ssthresh
//!   `cwnd += mss·mss/cwnd + mss/8` per ACK, the Reno increment);
//! * fast retransmit on the third duplicate ACK and fast recovery (window inflation by one
//!   MSS per further duplicate, deflation to ssthresh on the next new ACK);
//! * the receiver's window advertisement and BSD's ACK policy: an in-order segment sets
//!   the delayed-ACK flag; an ACK goes out at once when the advertised window would
//!   move by ≥ 2 MSS or ≥ half the receive buffer (so every second full segment), for an
//!   out-of-order or duplicate segment, and when a hole is filled; the delayed ACK is
//!   released by the 200 ms fast timer;
//! * RTT estimation in 500 ms slow-timer ticks (`t_rtt`, `t_srtt` scaled by 8,
//!   `t_rttvar` scaled by 4, `TCP_REXMTVAL = srtt/8 + rttvar`), one segment timed at a
//!   time, Karn's rule (no timing across a retransmission, backoff kept until a fresh
//!   sample), RTO clamped to [min 1 s = 2 ticks, max 64 s = 128 ticks], backoff
//!   1, 2, 4 … 64, initial RTO 6 s before any sample (4.4BSD `t_rxtcur` = 12 ticks);
//!   the retransmit timer counts down in slow ticks, so it fires *on* a tick;
//! * optional three-way handshake (off by default, as in lazarou96's model);
//! * `Timers::Fine`: the same algorithms on continuous time (RTT measured exactly,
//!   RTO = srtt + 4·rttvar fired exactly, delayed ACK after `delack_time`), the
//!   "without BSD timers" model of lazarou96 section 5.

use atmsim_wire::tcp::{TcpFlags, TcpRepr};
use std::collections::BTreeMap;

use atmsim_kernel::{SimDuration, SimTime};

/// Octets of IPv4 + TCP headers without options.
pub const HEADERS: usize = 40;
/// The advertised window travels in units of 2^WIN_SHIFT octets (RFC 1323 window scale).
pub const WIN_SHIFT: u32 = 4;
/// The largest window the wire encoding carries.
pub const MAX_WINDOW: u64 = (u16::MAX as u64) << WIN_SHIFT;

/// Segment flags (carried in the TCP header as SYN, ACK and PSH).
pub const F_SYN: u8 = 0x01;
/// The segment acknowledges: its `ack` and `win` mean something.
pub const F_ACK: u8 = 0x02;
/// The segment carries data: its `seq` and `len` mean something.
pub const F_DATA: u8 = 0x04;

/// BSD's retransmit backoff multipliers (`tcp_backoff[]`).
const BACKOFF: [u32; 13] = [1, 2, 4, 8, 16, 32, 64, 64, 64, 64, 64, 64, 64];
/// BSD's largest congestion window and initial ssthresh (`TCP_MAXWIN << TCP_MAX_WINSHIFT`).
const MAX_CWND: u64 = 65_535 << 14;

/// `TCP_MAXRXTSHIFT`: retransmissions before the connection is dropped.
pub const MAX_RXTSHIFT: u32 = 12;

/// One TCP segment. Data segments use `seq` and `len`; ACKs use `ack` and `win`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub flags: u8,
    pub seq: u64,
    pub len: u32,
    pub ack: u64,
    pub win: u64,
}

impl Segment {
    pub fn data(seq: u64, len: u32) -> Segment {
        Segment { flags: F_DATA, seq, len, ack: 0, win: 0 }
    }
    pub fn ack(ack: u64, win: u64) -> Segment {
        Segment { flags: F_ACK, seq: 0, len: 0, ack, win }
    }
    /// Octets of the IP datagram carrying it.
    pub fn ip_len(&self) -> usize {
        HEADERS + self.len as usize
    }
    /// The segment's TCP header (RFC 793): a data segment's sequence number and length,
    /// an ACK's acknowledgement number and window (in units of 2^`WIN_SHIFT` octets,
    /// as with an RFC 1323 window scale); numbers are sent modulo 2^32.
    pub fn to_repr(&self, src_port: u16, dst_port: u16) -> TcpRepr {
        let mut flags = TcpFlags::default();
        if self.flags & F_SYN != 0 {
            flags |= TcpFlags::SYN;
        }
        if self.flags & F_ACK != 0 {
            flags |= TcpFlags::ACK;
        }
        if self.flags & F_DATA != 0 {
            flags |= TcpFlags::PSH;
        }
        TcpRepr {
            src_port,
            dst_port,
            seq: self.seq as u32,
            ack: self.ack as u32,
            flags,
            window: (self.win >> WIN_SHIFT).min(u16::MAX as u64) as u16,
            urgent: 0,
            mss: None,
            window_scale: None,
            payload_len: self.len as usize,
        }
    }
    /// Rebuilds a segment from its TCP header, unwrapping 32-bit numbers: the sequence
    /// number and length of a data segment (PSH) near `near_seq` (the receiver's
    /// `rcv_nxt`), the acknowledgement number and window of an ACK near `near_ack` (the
    /// sender's `snd_una`). A segment may be both (an ACK piggybacked on data).
    pub fn from_repr(h: &TcpRepr, near_seq: u64, near_ack: u64) -> Segment {
        let mut flags = 0;
        if h.flags.contains(TcpFlags::SYN) {
            flags |= F_SYN;
        }
        if h.flags.contains(TcpFlags::ACK) {
            flags |= F_ACK;
        }
        if h.flags.contains(TcpFlags::PSH) {
            flags |= F_DATA;
        }
        let data = flags & F_DATA != 0;
        let ack = flags & F_ACK != 0;
        Segment {
            flags,
            seq: if data { unwrap_seq(h.seq, near_seq) } else { 0 },
            len: if data { h.payload_len.min(u32::MAX as usize) as u32 } else { 0 },
            ack: if ack { unwrap_seq(h.ack, near_ack) } else { 0 },
            win: if ack { (h.window as u64) << WIN_SHIFT } else { 0 },
        }
    }
}

/// The 64-bit sequence number whose low 32 bits are `x`, nearest to `near`.
pub fn unwrap_seq(x: u32, near: u64) -> u64 {
    let d = x.wrapping_sub(near as u32) as i32 as i64;
    (near as i64 + d).max(0) as u64
}

/// Which clock drives the timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timers {
    /// 4.3BSD: retransmission in 500 ms slow ticks, delayed ACKs on the 200 ms fast tick.
    Bsd,
    /// Continuous-time timers (lazarou96's ablation: a TCP model without BSD timers).
    Fine,
}

#[derive(Clone, Debug)]
pub struct Config {
    /// Maximum segment size, octets of data.
    pub mss: u32,
    /// Socket send buffer (`SO_SNDBUF`), octets; the application keeps it full.
    pub sndbuf: u64,
    /// Socket receive buffer (`SO_RCVBUF`), octets: the window the receiver advertises.
    pub rcvbuf: u64,
    /// Octets the application sends in all (None: unlimited).
    pub bytes: Option<u64>,
    pub timers: Timers,
    pub slow_tick: SimDuration,
    pub fast_tick: SimDuration,
    pub min_rto: SimDuration,
    pub max_rto: SimDuration,
    /// RTO before the first RTT sample.
    pub initial_rto: SimDuration,
    pub delayed_ack: bool,
    /// With fine timers: how long an ACK may be delayed.
    pub delack_time: SimDuration,
    pub fast_retransmit: bool,
    pub fast_recovery: bool,
    pub dupack_threshold: u32,
    /// The receiver sends a window update when the window opens by two segments or by
    /// this percentage of the receive buffer (4.3BSD-Reno: 50, `2 * adv >= sb_hiwat`;
    /// 4.3BSD-Tahoe: 35).
    pub win_update_pct: u32,
    pub handshake: bool,
    /// Congestion avoidance adds BSD's extra `mss/8` per ACK (4.3BSD-Reno, 4.4BSD-Lite:
    /// "to help larger windows open quickly enough"); false: `mss²/cwnd` only (RFC 2581).
    pub ca_bsd_extra: bool,
    /// The RTO estimate from `t_srtt` and `t_rttvar`: false, 4.3BSD-Reno's
    /// `TCP_REXMTVAL = (srtt >> 3) + rttvar` (and `rttvar += srtt >> 3` when a long
    /// backoff clobbers srtt); true, 4.3BSD-Tahoe's as SunOS 4.1.3 keeps it,
    /// `((srtt >> 2) + rttvar) >> 1` (and `rttvar += srtt >> 2`): SunOS 4.1.3
    /// `tcp_input.c` and `tcp_timer.c` ("from UCB 7.15.1.2 3/16/88", "7.11.1.2").
    /// With 8.8 ms samples counted in 500 ms ticks the estimator settles at srtt 7,
    /// rttvar 3: Reno 3 ticks, Tahoe 2.
    pub rto_tahoe: bool,
    /// The receiver ACKs an out-of-order segment at once (4.3BSD-Reno's `TCP_REASS`:
    /// "ack immediately when segments are out of order (so fast retransmit can work)").
    /// false: SunOS 4.1.3 (4.3BSD-Tahoe's `TCP_REASS`), which only sets the delayed-ACK
    /// flag for every data segment, in order or not; an out-of-order segment moves
    /// neither `rcv_nxt` nor the socket buffer, so `tcp_output`'s window-update rule
    /// sends nothing and the duplicate ACK waits for the 200 ms fast timer (one per
    /// tick at most). A segment that fills a hole is read at once and ACKed by the
    /// window-update rule as usual.
    pub ack_out_of_order: bool,
    /// Slow start (cwnd from one MSS at the start and after a timeout); false: cwnd is
    /// the whole window from the start and after timeouts (TCP before Jacobson 1988).
    pub slow_start: bool,
    /// Karn's rule: no RTT sample across a retransmission; false: the timed segment
    /// stays timed when it is retransmitted (ambiguous samples).
    pub karn: bool,
}

impl Config {
    /// lazarou96 Table 1 / 4.3BSD-Reno defaults with the given MSS and windows.
    pub fn bsd(mss: u32, window: u64) -> Config {
        Config {
            mss,
            sndbuf: window,
            rcvbuf: window,
            bytes: None,
            timers: Timers::Bsd,
            slow_tick: SimDuration(500_000_000_000),
            fast_tick: SimDuration(200_000_000_000),
            min_rto: SimDuration(1_000_000_000_000),
            max_rto: SimDuration(64_000_000_000_000),
            initial_rto: SimDuration(6_000_000_000_000),
            delayed_ack: true,
            delack_time: SimDuration(200_000_000_000),
            fast_retransmit: true,
            fast_recovery: true,
            dupack_threshold: 3,
            win_update_pct: 50,
            handshake: false,
            ca_bsd_extra: true,
            rto_tahoe: false,
            ack_out_of_order: true,
            slow_start: true,
            karn: true,
        }
    }

    fn ticks(&self, d: SimDuration) -> u32 {
        d.0.div_ceil(self.slow_tick.0.max(1)).min(u32::MAX as u64) as u32
    }
}

/// Sender counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderStats {
    pub segments: u64,
    pub retransmitted: u64,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub acked: u64,
    pub rtt_samples: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SndState {
    SynSent,
    Established,
    /// Gave up after `MAX_RXTSHIFT` retransmissions.
    Dropped,
}

/// The sending side of a connection (`ttcp -t`).
#[derive(Clone, Debug)]
pub struct Sender {
    pub cfg: Config,
    state: SndState,
    pub snd_una: u64,
    pub snd_nxt: u64,
    pub snd_max: u64,
    pub snd_wnd: u64,
    max_sndwnd: u64,
    pub cwnd: u64,
    pub ssthresh: u64,
    pub dupacks: u32,
    pub rxtshift: u32,
    // BSD timer state, in slow ticks.
    rexmt_ticks: u32,
    pub rxtcur: u32,
    t_rtt: u32,
    rtseq: u64,
    srtt: i64,
    rttvar: i64,
    // Fine timer state.
    rexmt_at: Option<SimTime>,
    timing: Option<(u64, SimTime)>,
    srtt_f: f64,
    rttvar_f: f64,
    rto_f: f64,
    pub stats: SenderStats,
}

/// First data octet's sequence number (the SYN takes 0).
pub const ISS: u64 = 0;

impl Sender {
    pub fn new(cfg: Config) -> Sender {
        let init = cfg.ticks(cfg.initial_rto).max(1);
        let established = !cfg.handshake;
        let first = if established { ISS + 1 } else { ISS };
        Sender {
            state: if established { SndState::Established } else { SndState::SynSent },
            snd_una: first,
            snd_nxt: first,
            snd_max: first,
            snd_wnd: if established { cfg.rcvbuf.min(MAX_WINDOW) >> WIN_SHIFT << WIN_SHIFT } else { 0 },
            max_sndwnd: if established { cfg.rcvbuf.min(MAX_WINDOW) } else { 0 },
            cwnd: if cfg.slow_start { cfg.mss as u64 } else { MAX_CWND },
            ssthresh: MAX_CWND,
            dupacks: 0,
            rxtshift: 0,
            rexmt_ticks: 0,
            rxtcur: init,
            t_rtt: 0,
            rtseq: 0,
            srtt: 0,
            // 4.4BSD tcp_newtcpcb: rttvar such that REXMTVAL = 2 × the initial RTO.
            rttvar: 2 * init as i64,
            rexmt_at: None,
            timing: None,
            srtt_f: 0.0,
            rttvar_f: 0.0,
            rto_f: cfg.initial_rto.0 as f64,
            stats: SenderStats::default(),
            cfg,
        }
    }

    pub fn is_dropped(&self) -> bool {
        self.state == SndState::Dropped
    }

    /// Data octets acknowledged so far.
    pub fn acked_bytes(&self) -> u64 {
        self.snd_una.saturating_sub(ISS + 1)
    }

    /// Octets in the send buffer from `snd_una` (the application keeps it full).
    fn sb_cc(&self) -> u64 {
        let left = match self.cfg.bytes {
            Some(b) => b.saturating_sub(self.acked_bytes()),
            None => u64::MAX,
        };
        self.cfg.sndbuf.min(left)
    }

    /// The RTO in ticks from the estimator (`TCP_REXMTVAL`).
    fn rexmtval(&self) -> i64 {
        if self.cfg.rto_tahoe {
            ((self.srtt >> 2) + self.rttvar) >> 1
        } else {
            (self.srtt >> 3) + self.rttvar
        }
    }

    fn range_ticks(&self, v: i64) -> u32 {
        let lo = self.cfg.ticks(self.cfg.min_rto) as i64;
        let hi = self.cfg.ticks(self.cfg.max_rto) as i64;
        v.clamp(lo, hi.max(lo)) as u32
    }

    fn rexmt_running(&self) -> bool {
        match self.cfg.timers {
            Timers::Bsd => self.rexmt_ticks != 0,
            Timers::Fine => self.rexmt_at.is_some(),
        }
    }

    fn set_rexmt(&mut self, now: SimTime) {
        match self.cfg.timers {
            Timers::Bsd => self.rexmt_ticks = self.rxtcur,
            Timers::Fine => {
                let backoff = BACKOFF[self.rxtshift.min(MAX_RXTSHIFT) as usize] as f64;
                let rto = (self.rto_f * backoff).clamp(self.cfg.min_rto.0 as f64, self.cfg.max_rto.0 as f64);
                self.rexmt_at = Some(now.plus(SimDuration(rto as u64)));
            }
        }
    }

    fn clear_rexmt(&mut self) {
        self.rexmt_ticks = 0;
        self.rexmt_at = None;
    }

    fn start_timing(&mut self, seq: u64, now: SimTime) {
        match self.cfg.timers {
            Timers::Bsd => {
                if self.t_rtt == 0 {
                    self.t_rtt = 1;
                    self.rtseq = seq;
                }
            }
            Timers::Fine => {
                if self.timing.is_none() {
                    self.timing = Some((seq, now));
                }
            }
        }
    }

    /// A retransmission: Karn's rule stops timing (BSD: `t_rtt = 0`).
    fn stop_timing(&mut self) {
        if self.cfg.karn {
            self.t_rtt = 0;
            self.timing = None;
        }
    }

    /// `tcp_xmit_timer`: a fresh RTT sample when `ack` covers the timed segment.
    fn maybe_sample(&mut self, ack: u64, now: SimTime) {
        match self.cfg.timers {
            Timers::Bsd => {
                if self.t_rtt == 0 || ack <= self.rtseq {
                    return;
                }
                let rtt = self.t_rtt as i64;
                if self.srtt != 0 {
                    let mut delta = rtt - 1 - (self.srtt >> 3);
                    self.srtt += delta;
                    if self.srtt <= 0 {
                        self.srtt = 1;
                    }
                    if delta < 0 {
                        delta = -delta;
                    }
                    delta -= self.rttvar >> 2;
                    self.rttvar += delta;
                    if self.rttvar <= 0 {
                        self.rttvar = 1;
                    }
                } else {
                    self.srtt = rtt << 3;
                    self.rttvar = rtt << 1;
                }
                self.t_rtt = 0;
                self.rxtshift = 0;
                self.rxtcur = self.range_ticks(self.rexmtval());
            }
            Timers::Fine => {
                let Some((seq, t0)) = self.timing else { return };
                if ack <= seq {
                    return;
                }
                let r = now.since(t0).0 as f64;
                if self.stats.rtt_samples == 0 {
                    self.srtt_f = r;
                    self.rttvar_f = r / 2.0;
                } else {
                    let err = r - self.srtt_f;
                    self.srtt_f += err / 8.0;
                    self.rttvar_f += (err.abs() - self.rttvar_f) / 4.0;
                }
                self.rto_f = (self.srtt_f + 4.0 * self.rttvar_f).clamp(self.cfg.min_rto.0 as f64, self.cfg.max_rto.0 as f64);
                self.timing = None;
                self.rxtshift = 0;
            }
        }
        self.stats.rtt_samples += 1;
    }

    /// Starts the connection: the SYN, or the first window of data.
    pub fn start(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.state == SndState::SynSent {
            self.send_syn(now, out);
        } else {
            self.output(now, out);
        }
    }

    fn send_syn(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        out.push(Segment { flags: F_SYN, seq: ISS, len: 0, ack: 0, win: 0 });
        self.stats.segments += 1;
        self.snd_nxt = ISS + 1;
        self.snd_max = ISS + 1;
        self.start_timing(ISS, now);
        if !self.rexmt_running() {
            self.set_rexmt(now);
        }
    }

    /// `tcp_output`: sends what the windows, the buffer and the send rules allow.
    pub fn output(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.state != SndState::Established {
            return;
        }
        let mss = self.cfg.mss as u64;
        loop {
            let idle = self.snd_max == self.snd_una;
            let off = self.snd_nxt - self.snd_una;
            let win = self.snd_wnd.min(self.cwnd);
            let sb_cc = self.sb_cc();
            let mut len = sb_cc.min(win).saturating_sub(off);
            let sendalot = len > mss;
            if sendalot {
                len = mss;
            }
            if len == 0 {
                return;
            }
            let send = len == mss || (idle && len + off >= sb_cc) || 2 * len >= self.max_sndwnd || self.snd_nxt < self.snd_max;
            if !send {
                return;
            }
            if self.snd_nxt < self.snd_max {
                self.stats.retransmitted += 1;
            }
            out.push(Segment::data(self.snd_nxt, len as u32));
            self.stats.segments += 1;
            let start = self.snd_nxt;
            self.snd_nxt += len;
            if self.snd_nxt > self.snd_max {
                self.snd_max = self.snd_nxt;
                self.start_timing(start, now);
            }
            if !self.rexmt_running() && self.snd_nxt != self.snd_una {
                self.set_rexmt(now);
            }
            if !sendalot {
                return;
            }
        }
    }

    /// `tcp_input` for a segment arriving at the sender (an ACK, or the SYN-ACK).
    pub fn input(&mut self, seg: &Segment, now: SimTime, out: &mut Vec<Segment>) {
        if seg.flags & F_ACK == 0 || self.state == SndState::Dropped {
            return;
        }
        if self.state == SndState::SynSent {
            if seg.flags & F_SYN == 0 || seg.ack != ISS + 1 {
                return;
            }
            self.maybe_sample(seg.ack, now);
            self.state = SndState::Established;
            self.snd_una = ISS + 1;
            self.snd_nxt = ISS + 1;
            self.snd_max = ISS + 1;
            self.snd_wnd = seg.win;
            self.max_sndwnd = seg.win;
            self.cwnd = if self.cfg.slow_start { self.cfg.mss as u64 } else { MAX_CWND };
            self.clear_rexmt();
            self.output(now, out);
            return;
        }
        if seg.flags & F_SYN != 0 {
            return; // a duplicate SYN-ACK
        }
        let mss = self.cfg.mss as u64;
        if seg.ack <= self.snd_una {
            // 4.3BSD counts a duplicate ACK only on a segment without data
            // (`ti_len == 0 && tiwin == snd_wnd`): an ACK piggybacked on data is not one.
            if seg.win == self.snd_wnd && seg.flags & F_DATA == 0 {
                if !self.rexmt_running() || seg.ack != self.snd_una {
                    self.dupacks = 0;
                } else {
                    self.dupacks += 1;
                    if self.cfg.fast_retransmit && self.dupacks == self.cfg.dupack_threshold {
                        let onxt = self.snd_nxt;
                        let win = (self.snd_wnd.min(self.cwnd) / 2 / mss).max(2);
                        self.ssthresh = win * mss;
                        self.clear_rexmt();
                        self.stop_timing();
                        self.snd_nxt = seg.ack;
                        self.cwnd = mss;
                        self.stats.fast_retransmits += 1;
                        self.output(now, out);
                        if self.cfg.fast_recovery {
                            self.cwnd = self.ssthresh + mss * self.dupacks as u64;
                        }
                        // Tahoe and Reno alike resume after the one retransmitted segment
                        // (4.3BSD-Tahoe's fast retransmit; Reno only added the inflation).
                        if onxt > self.snd_nxt {
                            self.snd_nxt = onxt;
                        }
                        return;
                    } else if self.cfg.fast_recovery && self.cfg.fast_retransmit && self.dupacks > self.cfg.dupack_threshold {
                        self.cwnd += mss;
                        self.output(now, out);
                        return;
                    }
                }
            } else {
                self.dupacks = 0;
            }
            self.window_update(seg, now, out);
            return;
        }
        // A new acknowledgement.
        if self.cfg.fast_recovery && self.dupacks > self.cfg.dupack_threshold && self.cwnd > self.ssthresh {
            self.cwnd = self.ssthresh;
        }
        self.dupacks = 0;
        if seg.ack > self.snd_max {
            return; // acknowledges data never sent: BSD drops it (after an ACK)
        }
        let acked = seg.ack - self.snd_una;
        self.maybe_sample(seg.ack, now);
        if seg.ack == self.snd_max {
            self.clear_rexmt();
        } else {
            self.set_rexmt(now);
        }
        let cw = self.cwnd;
        let mut incr = mss;
        if cw > self.ssthresh {
            incr = incr * incr / cw + if self.cfg.ca_bsd_extra { incr / 8 } else { 0 };
        }
        self.cwnd = (cw + incr).min(MAX_CWND);
        self.snd_una = seg.ack;
        self.stats.acked += acked;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        self.snd_wnd = seg.win;
        self.max_sndwnd = self.max_sndwnd.max(seg.win);
        self.output(now, out);
    }

    fn window_update(&mut self, seg: &Segment, now: SimTime, out: &mut Vec<Segment>) {
        if seg.ack == self.snd_una && seg.win > self.snd_wnd {
            self.snd_wnd = seg.win;
            self.max_sndwnd = self.max_sndwnd.max(seg.win);
            self.output(now, out);
        }
    }

    /// The REXMT timer expired (`tcp_timers(TCPT_REXMT)`).
    fn retransmit_timeout(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        self.rxtshift += 1;
        if self.rxtshift > MAX_RXTSHIFT {
            self.rxtshift = MAX_RXTSHIFT;
            self.state = SndState::Dropped;
            self.clear_rexmt();
            return;
        }
        self.stats.timeouts += 1;
        let b = BACKOFF[self.rxtshift as usize];
        self.rxtcur = self.range_ticks(self.rexmtval() * b as i64);
        if self.rxtshift > MAX_RXTSHIFT / 4 {
            self.rttvar += if self.cfg.rto_tahoe { self.srtt >> 2 } else { self.srtt >> 3 };
            self.srtt = 0;
        }
        self.set_rexmt(now);
        self.snd_nxt = self.snd_una;
        self.stop_timing();
        let mss = self.cfg.mss as u64;
        let win = (self.snd_wnd.min(self.cwnd) / 2 / mss).max(2);
        self.cwnd = if self.cfg.slow_start { mss } else { MAX_CWND };
        self.ssthresh = win * mss;
        self.dupacks = 0;
        if self.state == SndState::SynSent {
            self.stats.retransmitted += 1;
            out.push(Segment { flags: F_SYN, seq: ISS, len: 0, ack: 0, win: 0 });
            self.stats.segments += 1;
            self.snd_nxt = ISS + 1;
        } else {
            self.output(now, out);
        }
    }

    /// The 500 ms slow timer (`tcp_slowtimo`): counts the REXMT timer down, then `t_rtt` up.
    pub fn slow_tick(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.cfg.timers != Timers::Bsd || self.state == SndState::Dropped {
            return;
        }
        if self.rexmt_ticks != 0 {
            self.rexmt_ticks -= 1;
            if self.rexmt_ticks == 0 {
                self.retransmit_timeout(now, out);
            }
        }
        if self.t_rtt != 0 {
            self.t_rtt += 1;
        }
    }

    /// With fine timers: when the retransmit timer expires.
    pub fn deadline(&self) -> Option<SimTime> {
        self.rexmt_at
    }

    /// With fine timers: call at (or after) [`Sender::deadline`].
    pub fn on_deadline(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if let Some(t) = self.rexmt_at {
            if t <= now && self.state != SndState::Dropped {
                self.rexmt_at = None;
                self.retransmit_timeout(now, out);
            }
        }
    }

    /// The smoothed RTT and the current RTO, seconds (for reports).
    pub fn rtt_rto(&self) -> (f64, f64) {
        match self.cfg.timers {
            Timers::Bsd => {
                let tick = self.cfg.slow_tick.as_secs_f64();
                (self.srtt as f64 / 8.0 * tick, self.rxtcur as f64 * tick)
            }
            Timers::Fine => (self.srtt_f * 1e-12, self.rto_f * 1e-12),
        }
    }
}

/// Receiver counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    pub segments: u64,
    pub out_of_order: u64,
    pub duplicates: u64,
    /// ACK-only segments sent.
    pub acks: u64,
    /// ACKs carried by data segments (duplex connections).
    pub piggybacked: u64,
}

/// The receiving side of a connection (`ttcp -r`: it reads every octet as it arrives,
/// so the advertised window is the whole receive buffer).
#[derive(Clone, Debug)]
pub struct Receiver {
    pub cfg: Config,
    established: bool,
    pub rcv_nxt: u64,
    rcv_adv: u64,
    /// Out-of-order segments (`tcp_reass` queue): start → end.
    ooo: BTreeMap<u64, u64>,
    delack: bool,
    delack_at: Option<SimTime>,
    pub stats: ReceiverStats,
}

impl Receiver {
    pub fn new(cfg: Config) -> Receiver {
        let established = !cfg.handshake;
        let first = ISS + 1;
        let win = Self::window_of(&cfg);
        Receiver {
            established,
            rcv_nxt: first,
            rcv_adv: first + win,
            ooo: BTreeMap::new(),
            delack: false,
            delack_at: None,
            stats: ReceiverStats::default(),
            cfg,
        }
    }

    fn window_of(cfg: &Config) -> u64 {
        cfg.rcvbuf.min(MAX_WINDOW) >> WIN_SHIFT << WIN_SHIFT
    }

    /// Data octets delivered in order to the application.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt - (ISS + 1)
    }

    fn send_ack(&mut self, out: &mut Vec<Segment>) {
        let win = Self::window_of(&self.cfg);
        self.rcv_adv = self.rcv_nxt + win;
        self.delack = false;
        self.delack_at = None;
        self.stats.acks += 1;
        out.push(Segment::ack(self.rcv_nxt, win));
    }

    /// `tcp_input` at the receiver, then the application's read and `tcp_output`'s
    /// window-update rule.
    pub fn input(&mut self, seg: &Segment, now: SimTime, out: &mut Vec<Segment>) {
        if seg.flags & F_SYN != 0 {
            // (Re)send the SYN-ACK; our own ISN is implicit (we send no data).
            let win = Self::window_of(&self.cfg);
            out.push(Segment { flags: F_SYN | F_ACK, seq: 0, len: 0, ack: ISS + 1, win });
            self.stats.acks += 1;
            return;
        }
        if seg.flags & F_DATA == 0 {
            return;
        }
        self.established = true;
        self.stats.segments += 1;
        let (start, end) = (seg.seq, seg.seq + seg.len as u64);
        let win = Self::window_of(&self.cfg);
        if end <= self.rcv_nxt || start >= self.rcv_nxt + win {
            // Entirely old (a retransmission we already have), or beyond the window.
            self.stats.duplicates += 1;
            self.send_ack(out);
            return;
        }
        let end = end.min(self.rcv_nxt + win);
        if start <= self.rcv_nxt && self.ooo.is_empty() {
            self.rcv_nxt = end;
            if !self.cfg.delayed_ack {
                self.send_ack(out);
                return;
            }
            self.delack = true;
            if self.delack_at.is_none() && self.cfg.timers == Timers::Fine {
                self.delack_at = Some(now.plus(self.cfg.delack_time));
            }
            // The reader drains the buffer; tcp_output's window update rule.
            let adv = (self.rcv_nxt + win).saturating_sub(self.rcv_adv);
            if adv >= 2 * self.cfg.mss as u64 || 100 * adv >= self.cfg.win_update_pct as u64 * self.cfg.rcvbuf {
                self.send_ack(out);
            }
            return;
        }
        // tcp_reass: queue, merge what became contiguous, ACK now (Reno).
        if start > self.rcv_nxt {
            self.stats.out_of_order += 1;
        }
        let before = self.rcv_nxt;
        let e = self.ooo.entry(start.max(self.rcv_nxt)).or_insert(end);
        if *e < end {
            *e = end;
        }
        while let Some((&s, &e)) = self.ooo.iter().next() {
            if s > self.rcv_nxt {
                break;
            }
            self.ooo.remove(&s);
            if e > self.rcv_nxt {
                self.rcv_nxt = e;
            }
        }
        if self.cfg.ack_out_of_order {
            self.send_ack(out);
            return;
        }
        // Tahoe (SunOS 4.1.3): the delayed-ACK flag only; what reached the reader is
        // ACKed by the window-update rule, a hole waits for the fast timer.
        self.delack = true;
        if self.delack_at.is_none() && self.cfg.timers == Timers::Fine {
            self.delack_at = Some(now.plus(self.cfg.delack_time));
        }
        if self.rcv_nxt > before {
            let adv = (self.rcv_nxt + win).saturating_sub(self.rcv_adv);
            if adv >= 2 * self.cfg.mss as u64 || 100 * adv >= self.cfg.win_update_pct as u64 * self.cfg.rcvbuf {
                self.send_ack(out);
            }
        }
    }

    /// The acknowledgement number and window the next segment this end sends carries
    /// (`rcv_nxt` and the advertised window).
    pub fn ack_fields(&self) -> (u64, u64) {
        (self.rcv_nxt, Self::window_of(&self.cfg))
    }

    /// A data segment carrying [`Receiver::ack_fields`] was sent: as in 4.3BSD's
    /// `tcp_output`, it acknowledges everything received (a delayed ACK is no longer
    /// owed) and advertises the window.
    pub fn acked_by_output(&mut self) {
        let win = Self::window_of(&self.cfg);
        self.rcv_adv = self.rcv_nxt + win;
        self.delack = false;
        self.delack_at = None;
        self.stats.piggybacked += 1;
    }

    /// The 200 ms fast timer (`tcp_fasttimo`): releases a delayed ACK.
    pub fn fast_tick(&mut self, out: &mut Vec<Segment>) {
        if self.cfg.timers == Timers::Bsd && self.delack {
            self.send_ack(out);
        }
    }

    pub fn deadline(&self) -> Option<SimTime> {
        self.delack_at
    }

    pub fn on_deadline(&mut self, now: SimTime, out: &mut Vec<Segment>) {
        if self.delack_at.is_some_and(|t| t <= now) && self.delack {
            self.send_ack(out);
        }
    }

    pub fn is_established(&self) -> bool {
        self.established
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn t(ms: u64) -> SimTime {
        SimTime(ms * 1_000_000_000)
    }

    fn cfg(window: u64) -> Config {
        Config::bsd(MSS, window)
    }

    fn seqs(out: &[Segment]) -> Vec<(u64, u32)> {
        out.iter().map(|s| (s.seq, s.len)).collect()
    }

    #[test]
    fn wire_round_trip_and_unwrap() {
        let s = Segment::data((1u64 << 32) + 5, 9140);
        assert_eq!(Segment::from_repr(&s.to_repr(1, 2), (1u64 << 32) - 100, 0), s);
        let a = Segment::ack(77, 131_072);
        let h = a.to_repr(2, 1);
        assert_eq!((h.ack, h.window, h.flags), (77, (131_072u64 >> WIN_SHIFT) as u16, TcpFlags::ACK));
        assert_eq!(Segment::from_repr(&h, 0, 50), a);
        assert_eq!(unwrap_seq(3, u32::MAX as u64 - 2), (1u64 << 32) + 3);
        // Data with an ACK piggybacked: each number unwrapped near its own reference.
        let both = Segment { flags: F_DATA | F_ACK, seq: (3u64 << 32) + 10, len: 500, ack: (1u64 << 32) + 7, win: 65_536 };
        assert_eq!(Segment::from_repr(&both.to_repr(1, 2), 3u64 << 32, 1u64 << 32), both);
    }

    #[test]
    fn without_slow_start_the_whole_window_goes_at_once_and_again_after_a_timeout() {
        let mut c = cfg(8000);
        c.slow_start = false;
        let mut s = Sender::new(c);
        let mut out = Vec::new();
        s.start(t(0), &mut out);
        assert_eq!(out.len(), 8, "the whole 8-segment window");
        out.clear();
        for k in 1..=12u64 {
            s.slow_tick(t(k * 500), &mut out);
            if !out.is_empty() {
                break;
            }
        }
        // Go-back-N without slow start: the window is resent at once.
        assert_eq!(seqs(&out).len(), 8);
    }

    #[test]
    fn without_karn_a_retransmitted_segment_still_gives_a_sample() {
        for (karn, samples) in [(true, 0), (false, 1)] {
            let mut c = cfg(100_000);
            c.karn = karn;
            let mut s = Sender::new(c);
            let mut out = Vec::new();
            s.start(t(0), &mut out);
            for k in 1..=12u64 {
                s.slow_tick(t(k * 500), &mut out);
            }
            assert!(s.stats.timeouts > 0);
            s.input(&Segment::ack(1001, 100_000), t(6500), &mut out);
            assert_eq!(s.stats.rtt_samples, samples, "karn {karn}");
        }
    }

    #[test]
    fn congestion_avoidance_increment_reno_or_rfc2581() {
        for (extra, expect) in [(true, 4000 + 250 + 125), (false, 4000 + 250)] {
            let mut c = cfg(100_000);
            c.ca_bsd_extra = extra;
            let mut s = Sender::new(c);
            let mut out = Vec::new();
            s.cwnd = 4000;
            s.ssthresh = 2000;
            s.output(t(0), &mut out);
            s.input(&Segment::ack(1001, 100_000), t(1), &mut out);
            assert_eq!(s.cwnd, expect, "bsd extra {extra}");
        }
    }

    /// Slow start as 4.3BSD does it: cwnd starts at one MSS and grows by one MSS per ACK;
    /// the receiver ACKs every second full segment.
    #[test]
    fn slow_start_and_every_second_segment_acked() {
        let mut s = Sender::new(cfg(64_000));
        let mut r = Receiver::new(cfg(64_000));
        let mut out = Vec::new();
        s.start(t(0), &mut out);
        assert_eq!(seqs(&out), vec![(1, 1000)]);
        // One segment: not two MSS, not half the buffer → the ACK is delayed.
        let mut acks = Vec::new();
        r.input(&out[0], t(1), &mut acks);
        assert!(acks.is_empty());
        r.fast_tick(&mut acks);
        assert_eq!(acks, vec![Segment::ack(1001, 64_000)]);
        out.clear();
        s.input(&acks[0], t(2), &mut out);
        assert_eq!(s.cwnd, 2000);
        assert_eq!(seqs(&out), vec![(1001, 1000), (2001, 1000)]);
        acks.clear();
        r.input(&out[0], t(3), &mut acks);
        assert!(acks.is_empty());
        r.input(&out[1], t(3), &mut acks);
        assert_eq!(acks, vec![Segment::ack(3001, 64_000)]);
        out.clear();
        s.input(&acks[0], t(4), &mut out);
        assert_eq!(s.cwnd, 3000);
        assert_eq!(seqs(&out), vec![(3001, 1000), (4001, 1000), (5001, 1000)]);
    }

    /// The window-update rule at the receiver: 4.3BSD-Reno sends a pure window update
    /// when the window opens by two segments or half the buffer; 4.3BSD-Tahoe's (SunOS
    /// 4.1's) by two segments or 35% of the buffer. With a 2,800-octet buffer and
    /// 1,000-octet segments one segment opens 36%: Tahoe ACKs it at once, Reno waits.
    #[test]
    fn window_update_at_half_the_buffer_or_at_35_percent() {
        let mut reno = Receiver::new(cfg(2_800));
        let mut tahoe = Receiver::new(Config { win_update_pct: 35, ..cfg(2_800) });
        let seg = Segment::data(1, 1000);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        reno.input(&seg, t(1), &mut a);
        tahoe.input(&seg, t(1), &mut b);
        assert!(a.is_empty(), "Reno: 1,000 of 2,800 is under half: delayed");
        // The window travels in units of 16 octets: 2,800 → 2,800.
        assert_eq!(b, vec![Segment::ack(1001, 2_800)]);
    }

    /// Tahoe (SunOS 4.1's lineage): on the third duplicate ACK the missing segment goes
    /// out alone with cwnd = 1 MSS and the sender resumes at the old snd_nxt (no
    /// go-back-N); further duplicates send nothing; the ACK that the retransmission
    /// brings (the receiver ACKs at once when it fills a hole) acknowledges everything
    /// and slow start sends two new segments.
    #[test]
    fn tahoe_fast_retransmit_resumes_without_going_back() {
        let mut s = Sender::new(Config { fast_recovery: false, ..cfg(100_000) });
        let mut out = Vec::new();
        s.cwnd = 4000;
        s.output(t(0), &mut out);
        assert_eq!(s.snd_nxt, 4001);
        let mut sent = Vec::new();
        for _ in 0..3 {
            s.input(&Segment::ack(1, 100_000), t(10), &mut sent);
        }
        assert_eq!(seqs(&sent), vec![(1, 1000)], "the missing segment only");
        assert_eq!((s.cwnd, s.ssthresh, s.snd_nxt), (1000, 2000, 4001));
        sent.clear();
        s.input(&Segment::ack(1, 100_000), t(11), &mut sent);
        assert!(sent.is_empty(), "Tahoe does not inflate the window");
        // The retransmission filled the hole: everything is acknowledged; cwnd 1 → 2 MSS.
        s.input(&Segment::ack(4001, 100_000), t(20), &mut sent);
        assert_eq!(s.cwnd, 2000);
        assert_eq!(seqs(&sent), vec![(4001, 1000), (5001, 1000)]);
        assert_eq!(s.stats.retransmitted, 1);
    }

    /// Moldeklev & Gunningberg's deadlock (1995: SunOS 4.1.3, MTU 9180) from the rules
    /// alone: a send buffer of 1.5 segments against a 8-segment receive window. The
    /// sender sends one full segment and holds the half-segment tail (data outstanding,
    /// less than a segment and less than half the peer's window: tcp_output's
    /// silly-window/Nagle rule); the receiver holds its ACK (one segment opens the window
    /// by less than two segments or half the buffer) until the 200 ms fast tick: one
    /// segment per fast tick, whatever the path.
    #[test]
    fn a_small_send_buffer_against_a_large_window_deadlocks_until_the_fast_tick() {
        let mut s = Sender::new(Config { sndbuf: 1500, ..cfg(8000) });
        let mut r = Receiver::new(cfg(8000));
        let mut out = Vec::new();
        s.start(t(0), &mut out);
        for round in 0..3u64 {
            assert_eq!(seqs(&out), vec![(1 + 1000 * round, 1000)], "round {round}: one segment, the tail held");
            let mut acks = Vec::new();
            r.input(&out[0], t(1 + 200 * round), &mut acks);
            assert!(acks.is_empty(), "round {round}: the ACK waits for the fast tick");
            r.fast_tick(&mut acks);
            assert_eq!(acks.len(), 1);
            out.clear();
            s.input(&acks[0], t(200 * (round + 1)), &mut out);
        }
        // With the send buffer as large as the window the same rules send a full window.
        let mut s = Sender::new(Config { sndbuf: 8000, ..cfg(8000) });
        s.cwnd = 8000;
        let mut out = Vec::new();
        s.output(t(0), &mut out);
        assert_eq!(out.len(), 8);
    }

    /// A loss, three duplicate ACKs, fast retransmit and fast recovery, derived by hand
    /// from tcp_input (4.3BSD-Reno): ssthresh = max(2, min(wnd, cwnd)/2/mss)·mss; the
    /// missing segment goes out with cwnd = 1 MSS; cwnd = ssthresh + 3 MSS; each further
    /// duplicate inflates cwnd by one MSS and may release new data; the next new ACK
    /// deflates cwnd to ssthresh.
    #[test]
    fn fast_retransmit_and_fast_recovery_event_by_event() {
        let mut s = Sender::new(cfg(100_000));
        let mut out = Vec::new();
        s.cwnd = 8000;
        s.output(t(0), &mut out);
        assert_eq!(out.len(), 8);
        assert_eq!(s.snd_nxt, 8001);
        // Segment 2 (1001..2001) is lost; segments 1, 3..8 arrive at the receiver.
        let mut r = Receiver::new(cfg(100_000));
        let mut acks = Vec::new();
        for (i, seg) in out.iter().enumerate() {
            if i != 1 {
                r.input(seg, t(10), &mut acks);
            }
        }
        // Segment 1 in order (delayed), then six out-of-order ones: six immediate dup ACKs.
        assert_eq!(acks.len(), 6);
        assert!(acks.iter().all(|a| a.ack == 1001));
        let mut sent = Vec::new();
        // The first ACK (from the fast timer) acknowledges segment 1: cwnd 8000 → 9000.
        r.fast_tick(&mut Vec::new());
        s.input(&Segment::ack(1001, 100_000), t(20), &mut sent);
        assert_eq!(s.cwnd, 9000);
        assert_eq!(seqs(&sent), vec![(8001, 1000), (9001, 1000)]);
        sent.clear();
        s.input(&acks[0], t(21), &mut sent);
        s.input(&acks[1], t(21), &mut sent);
        assert!(sent.is_empty(), "first two duplicates send nothing");
        assert_eq!(s.dupacks, 2);
        s.input(&acks[2], t(22), &mut sent);
        // Third duplicate: ssthresh = min(100000, 9000)/2/1000 = 4 → 4000; retransmit 1001.
        assert_eq!(s.ssthresh, 4000);
        assert_eq!(seqs(&sent), vec![(1001, 1000)]);
        assert_eq!(s.cwnd, 4000 + 3 * 1000);
        assert_eq!(s.snd_nxt, 10_001);
        assert_eq!(s.stats.fast_retransmits, 1);
        sent.clear();
        // Fourth duplicate: cwnd 8000, outstanding 9000 → nothing new.
        s.input(&acks[3], t(23), &mut sent);
        assert_eq!(s.cwnd, 8000);
        assert!(sent.is_empty());
        s.input(&acks[4], t(23), &mut sent);
        s.input(&acks[5], t(23), &mut sent);
        // cwnd 10000 > 9000 outstanding → one new segment at 10001.
        assert_eq!(s.cwnd, 10_000);
        assert_eq!(seqs(&sent), vec![(10_001, 1000)]);
        sent.clear();
        // The retransmission fills the hole: the receiver ACKs everything up to 8001.
        let mut ack = Vec::new();
        r.input(&Segment::data(1001, 1000), t(30), &mut ack);
        assert_eq!(ack, vec![Segment::ack(8001, 100_000)]);
        s.input(&ack[0], t(31), &mut sent);
        // Deflate to ssthresh (4000); cwnd is not *above* ssthresh, so this ACK still
        // opens it by a whole MSS (BSD tests `cw > snd_ssthresh`).
        assert_eq!(s.cwnd, 5000);
        assert_eq!(s.dupacks, 0);
        assert_eq!(s.snd_una, 8001);
    }

    /// A timeout on the 500 ms tick: after one sample of one tick, srtt = 8 (1 tick × 8),
    /// rttvar = 2, REXMTVAL = 1 + 2 = 3 ticks. A segment sent at 1.2 s has its timer
    /// set to 3 ticks, counted down at 1.5, 2.0 and 2.5 s: it is retransmitted at 2.5 s
    /// (1.3 s later, not 1.5 s). The next RTO is 3 × backoff 2 = 6 ticks → 5.5 s.
    #[test]
    fn retransmission_timeout_fires_on_the_slow_tick() {
        let mut s = Sender::new(cfg(100_000));
        s.cfg.bytes = Some(1000);
        let mut out = Vec::new();
        s.start(t(100), &mut out);
        assert_eq!(s.rxtcur, 12, "6 s before any RTT sample");
        s.input(&Segment::ack(1001, 100_000), t(150), &mut out);
        assert_eq!(s.rxtcur, 3);
        out.clear();
        // Ticks at 0.5 and 1.0 s: nothing outstanding, no timer running.
        s.slow_tick(t(500), &mut out);
        s.slow_tick(t(1000), &mut out);
        assert!(out.is_empty());
        s.cfg.bytes = Some(2000);
        s.output(t(1200), &mut out);
        assert_eq!(seqs(&out), vec![(1001, 1000)]);
        assert_eq!(s.cwnd, 2000);
        out.clear();
        let mut fired = Vec::new();
        for k in 3..=12u64 {
            let now = t(k * 500);
            s.slow_tick(now, &mut out);
            if !out.is_empty() {
                fired.push((k * 500, seqs(&out)));
                out.clear();
            }
        }
        assert_eq!(fired, vec![(2500, vec![(1001, 1000)]), (5500, vec![(1001, 1000)])]);
        assert_eq!(s.cwnd, 1000);
        assert_eq!(s.ssthresh, 2000);
        assert_eq!(s.stats.timeouts, 2);
        // Karn: the ACK of the retransmission gives no sample (timing was cancelled) and
        // the backed-off RTO (12 ticks after the second timeout) stays.
        s.input(&Segment::ack(2001, 100_000), t(5600), &mut out);
        assert_eq!(s.stats.rtt_samples, 1);
        assert_eq!(s.rxtcur, 12);
    }

    fn tahoe(window: u64) -> Config {
        Config { fast_recovery: false, win_update_pct: 35, ca_bsd_extra: false, rto_tahoe: true, ack_out_of_order: false, ..cfg(window) }
    }

    /// SunOS 4.1.3's receiver (4.3BSD-Tahoe `TCP_REASS`): every data segment only sets
    /// the delayed-ACK flag. The same losses as in
    /// `fast_retransmit_and_fast_recovery_event_by_event` give no immediate duplicate
    /// ACKs: one ACK per fast tick, and the segment that fills the hole is ACKed at
    /// once by the window-update rule (the window opens by 7 segments).
    #[test]
    fn tahoe_receiver_acks_out_of_order_segments_only_on_the_fast_tick() {
        let mut r = Receiver::new(tahoe(100_000));
        let mut acks = Vec::new();
        for k in 0..8u64 {
            if k != 1 {
                r.input(&Segment::data(1 + 1000 * k, 1000), t(10), &mut acks);
            }
        }
        assert!(acks.is_empty(), "no ACK for segment 1 (delayed) nor for the six after the hole");
        assert_eq!(r.stats.out_of_order, 6);
        r.fast_tick(&mut acks);
        assert_eq!(acks, vec![Segment::ack(1001, 100_000)]);
        acks.clear();
        // Nothing more arrives: the next tick sends nothing (the flag was cleared).
        r.fast_tick(&mut acks);
        assert!(acks.is_empty());
        // One more out-of-order segment: again only the flag, one duplicate at the tick.
        r.input(&Segment::data(8001, 1000), t(250), &mut acks);
        assert!(acks.is_empty());
        r.fast_tick(&mut acks);
        assert_eq!(acks, vec![Segment::ack(1001, 100_000)]);
        acks.clear();
        // The retransmission fills the hole: 8 segments reach the reader, ACK at once.
        r.input(&Segment::data(1001, 1000), t(400), &mut acks);
        assert_eq!(acks, vec![Segment::ack(9001, 100_000)]);
        acks.clear();
        // A one-segment hole before one queued segment: the fill opens the window by
        // two MSS, ACK at once; a single in-order segment (one MSS, under 35%) waits
        // for the fast tick.
        r.input(&Segment::data(10_001, 1000), t(410), &mut acks);
        assert!(acks.is_empty());
        r.input(&Segment::data(9001, 1000), t(411), &mut acks);
        assert_eq!(acks, vec![Segment::ack(11_001, 100_000)]);
        acks.clear();
        r.input(&Segment::data(11_001, 1000), t(420), &mut acks);
        assert!(acks.is_empty());
        r.fast_tick(&mut acks);
        assert_eq!(acks, vec![Segment::ack(12_001, 100_000)]);
        // A Reno receiver ACKs both out-of-order arrivals and the fill at once.
        let mut reno = Receiver::new(cfg(100_000));
        let mut a = Vec::new();
        reno.input(&Segment::data(1001, 1000), t(0), &mut a);
        reno.input(&Segment::data(1, 1000), t(0), &mut a);
        assert_eq!(a, vec![Segment::ack(1, 100_000), Segment::ack(2001, 100_000)]);
    }

    /// SunOS 4.1.3's RTO (`((t_srtt >> 2) + t_rttvar) >> 1`) against Reno's
    /// (`(t_srtt >> 3) + t_rttvar`), samples of one tick (an 8.8 ms path, 500 ms
    /// ticks): first sample srtt 8, rttvar 2 → Tahoe (2 + 2) / 2 = 2, Reno 1 + 2 = 3;
    /// then srtt 7, rttvar 3 for good → Tahoe (1 + 3) / 2 = 2, Reno 0 + 3 = 3 ticks.
    /// Congestion avoidance in Tahoe adds mss²/cwnd only.
    #[test]
    fn tahoe_rto_settles_at_two_ticks_where_reno_keeps_three() {
        for (c, want) in [(tahoe(100_000), [2u32, 2, 2, 2]), (cfg(100_000), [3, 3, 3, 3])] {
            let mut s = Sender::new(c);
            let mut out = Vec::new();
            s.start(t(0), &mut out);
            let mut got = Vec::new();
            for k in 0..4u64 {
                // The segment timed at k·1000 ms is ACKed 9 ms later, no tick between.
                out.clear();
                s.output(t(1000 * k), &mut out);
                let acked = s.snd_nxt;
                s.input(&Segment::ack(acked, 100_000), t(1000 * k + 9), &mut out);
                got.push(s.rxtcur);
            }
            assert_eq!(got, want);
            assert_eq!(s.stats.rtt_samples, 4);
        }
        let mut s = Sender::new(tahoe(100_000));
        s.ssthresh = 2000;
        s.cwnd = 4000;
        s.snd_nxt = 4001;
        s.snd_max = 4001;
        s.input(&Segment::ack(1001, 100_000), t(5), &mut Vec::new());
        assert_eq!(s.cwnd, 4000 + 1000 * 1000 / 4000);
    }

    #[test]
    fn rto_never_below_two_ticks_and_backoff_caps_at_64s() {
        let mut s = Sender::new(cfg(100_000));
        let mut out = Vec::new();
        s.start(t(0), &mut out);
        let mut k = 0;
        while !s.is_dropped() && k < 10_000 {
            k += 1;
            s.slow_tick(t(k * 500), &mut out);
            assert!(s.rxtcur >= 2 && s.rxtcur <= 128);
        }
        assert!(s.is_dropped(), "gives up after 12 retransmissions");
        assert_eq!(s.stats.timeouts, 12);
    }

    #[test]
    fn handshake_times_the_syn() {
        let mut c = cfg(64_000);
        c.handshake = true;
        let mut s = Sender::new(c.clone());
        let mut r = Receiver::new(c);
        let mut out = Vec::new();
        s.start(t(0), &mut out);
        assert_eq!(out[0].flags, F_SYN);
        let mut back = Vec::new();
        r.input(&out[0], t(5), &mut back);
        assert_eq!(back[0].flags, F_SYN | F_ACK);
        out.clear();
        s.input(&back[0], t(10), &mut out);
        assert_eq!(seqs(&out), vec![(1, 1000)]);
        assert_eq!(s.stats.rtt_samples, 1);
    }

    #[test]
    fn fine_timers_fire_at_the_rto() {
        let mut c = cfg(100_000);
        c.timers = Timers::Fine;
        c.min_rto = SimDuration(0);
        let mut s = Sender::new(c);
        let mut out = Vec::new();
        s.start(t(0), &mut out);
        s.input(&Segment::ack(1001, 100_000), t(100), &mut out);
        // First sample r = 100 ms: srtt 100, rttvar 50 → RTO 300 ms.
        out.clear();
        s.output(t(200), &mut out);
        // The timer was (re)started by the ACK at 100 ms, after the sample.
        let d = s.deadline().unwrap();
        assert_eq!(d, t(400));
        out.clear();
        s.on_deadline(d, &mut out);
        assert_eq!(out[0].seq, 1001);
        // Backoff 2 → 600 ms later.
        assert_eq!(s.deadline(), Some(t(1000)));
    }
}
