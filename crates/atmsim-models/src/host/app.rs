//! A host's applications as a part: ping (ICMP echo requests, RTT and loss as ping(8)
//! reports them), the echo responder every host has, and a UDP blaster (ttcp -u), with
//! their counters, and the delay of every UDP datagram received (from its sender's
//! application handing it to IP to its reassembly here: ITU-T Y.1540's one-way IP packet
//! transfer delay). With `quantile_digits` the RTTs and the UDP delays are also kept as
//! distributions ([`Distribution`]) whose quantiles are reported.
//!
//! ```text
//!   tick(now) ──► App ──► Tick { send: datagram to send now, next: next tick }
//!   whole datagram (kind, id) ──► App ──► answer (an echo reply) or nothing;
//!                                        RTTs and counters booked
//! ```
//!
//! Sans-IO: [`App::tick`] and [`App::on_datagram`] take the time they are asked at. The
//! part owns its timer ([`crate::timer::Timer`]): [`App::start`] arms the first tick;
//! the handler checks [`App::fire`], calls [`App::tick`], sends, then arms `next` with
//! [`App::arm`] (after the send, so ties keep their order).

use atmsim_kernel::probe::{Distribution, Report, Tally};
use atmsim_kernel::{SimDuration, SimTime, Stream};

use super::ip::Kind;
use crate::kind::Cx;
use crate::timer::Timer;
use crate::traffic::exp_ps;

/// Which application runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AppKind {
    /// None: the host only answers echo requests (and runs its TCP connections).
    None,
    /// `count` echo requests every `interval`.
    Ping,
    /// UDP datagrams at a fixed mean rate until `stop`.
    Udp,
}

/// An application's settings.
#[derive(Clone, Debug, PartialEq)]
pub struct AppConfig {
    pub kind: AppKind,
    /// Ping: requests to send.
    pub count: u64,
    /// Ping: time between requests.
    pub interval: SimDuration,
    /// Ping: ICMP data octets; UDP: UDP data octets.
    pub length: usize,
    /// Ping: a reply later than this counts as lost.
    pub timeout: SimDuration,
    /// UDP: the (mean) time between datagrams.
    pub udp_gap: Option<SimDuration>,
    /// UDP: exponential gaps of mean `udp_gap` instead of even ones.
    pub udp_poisson: bool,
    /// When the application starts.
    pub start: SimTime,
    /// UDP: when the blaster stops.
    pub stop: SimTime,
    /// Answer echo requests.
    pub reply: bool,
    /// Significant digits of the RTT and UDP delay distributions; `None`: not kept.
    pub quantile_digits: Option<u8>,
}

/// A datagram the application hands to IP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Send {
    pub kind: Kind,
    /// Ping: the request's number (0, 1, ...; its ICMP sequence number is this modulo
    /// 2^16); `None` for UDP.
    pub id: Option<u32>,
    /// Octets of application data (the ICMP or UDP header is added by IP).
    pub data: usize,
}

/// What one tick of the application does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tick {
    /// The datagram to send now.
    pub send: Option<Send>,
    /// When to tick next.
    pub next: Option<SimTime>,
}

/// The application part.
#[derive(Clone, Debug)]
pub struct App {
    cfg: AppConfig,
    rng: Stream,
    timer: Timer,
    /// When each echo request left (index: its id).
    sent_at: Vec<SimTime>,
    // statistics (since the last reset)
    ping_tx: u64,
    ping_rx: u64,
    /// Round-trip times (ps) of the replies in time.
    rtt: Distribution,
    udp_tx: u64,
    udp_rx: u64,
    /// Delays (ps) of the UDP datagrams received.
    udp_delay: Distribution,
}

impl App {
    /// The application `cfg`, drawing exponential UDP gaps from `rng`.
    pub fn new(cfg: AppConfig, rng: Stream) -> App {
        let d = Distribution::new(cfg.quantile_digits);
        App { cfg, rng, timer: Timer::default(), sent_at: Vec::new(), ping_tx: 0, ping_rx: 0, rtt: d.clone(), udp_tx: 0, udp_rx: 0, udp_delay: d }
    }

    /// Which application runs.
    pub fn kind(&self) -> AppKind {
        self.cfg.kind
    }

    /// When the application first ticks, if it sends at all.
    pub fn first_tick(&self) -> Option<SimTime> {
        (self.cfg.kind != AppKind::None && self.cfg.start < self.cfg.stop).then_some(self.cfg.start)
    }

    /// The application's timer fired at `now`: what to send and when to tick next.
    pub fn tick(&mut self, now: SimTime) -> Tick {
        match self.cfg.kind {
            AppKind::Ping => {
                let k = self.sent_at.len() as u64;
                if k >= self.cfg.count {
                    return Tick::default();
                }
                self.sent_at.push(now);
                self.ping_tx += 1;
                let send = Send { kind: Kind::EchoRequest, id: Some(k as u32), data: self.cfg.length };
                let next = (k + 1 < self.cfg.count).then(|| now.plus(self.cfg.interval));
                Tick { send: Some(send), next }
            }
            AppKind::Udp => {
                if now >= self.cfg.stop {
                    return Tick::default();
                }
                self.udp_tx += 1;
                let send = Send { kind: Kind::Udp, id: None, data: self.cfg.length };
                let next = self.cfg.udp_gap.map(|g| {
                    let gap = if self.cfg.udp_poisson { SimDuration(exp_ps(&mut self.rng, g.0 as f64)) } else { g };
                    now.plus(gap)
                });
                Tick { send: Some(send), next }
            }
            AppKind::None => Tick::default(),
        }
    }

    /// A whole datagram of `kind` arrived at `now` (an echo message's ICMP sequence
    /// number `seq`), sent at `born` (its first cell's birth): books echo replies (RTT,
    /// if in time) and UDP datagrams (with their delay); returns
    /// the kind of the answer to send (an echo reply to an echo request when replies
    /// are on). A reply's sequence number is 16 bits: as ping(8) does, it matches the
    /// latest request sent with that number modulo 2^16.
    pub fn on_datagram(&mut self, now: SimTime, kind: Kind, seq: u16, born: SimTime) -> Option<Kind> {
        match kind {
            Kind::EchoRequest if self.cfg.reply => return Some(Kind::EchoReply),
            Kind::EchoReply => {
                let sent = self.sent_at.len();
                let back = sent.wrapping_sub(1).wrapping_sub(seq as usize) & 0xffff;
                if let Some(&t0) = sent.checked_sub(1 + back).and_then(|k| self.sent_at.get(k)) {
                    let rtt = now.since(t0);
                    if rtt <= self.cfg.timeout {
                        self.ping_rx += 1;
                        self.rtt.add(rtt.0);
                    }
                }
            }
            Kind::Udp => {
                self.udp_rx += 1;
                self.udp_delay.add(now.since(born).0);
            }
            _ => {}
        }
        None
    }

    /// Arms the first tick (tag `tag`), if the application sends.
    pub fn start(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        if let Some(at) = self.first_tick() {
            self.timer.arm(at, tag, ctx);
        }
    }

    /// The timer fired at `now`: true if it is the armed event (then call
    /// [`App::tick`]).
    pub fn fire(&mut self, now: SimTime) -> bool {
        self.timer.fire(now)
    }

    /// Arms the next tick (tag `tag`) at `at`.
    pub fn arm(&mut self, at: SimTime, tag: u32, ctx: &mut Cx<'_>) {
        self.timer.arm(at, tag, ctx);
    }

    /// UDP datagrams received whole since the last reset.
    pub fn udp_rx(&self) -> u64 {
        self.udp_rx
    }

    /// Echo requests sent, replies received in time, and their RTTs (ps), since the
    /// last reset.
    pub fn ping_stats(&self) -> (u64, u64, &Tally) {
        (self.ping_tx, self.ping_rx, self.rtt.tally())
    }

    /// UDP datagrams sent since the last reset.
    pub fn udp_tx(&self) -> u64 {
        self.udp_tx
    }

}

impl crate::part::Part for App {
    /// Starts the statistics afresh.
    fn reset_stats(&mut self, _now: SimTime) {
        self.ping_tx = 0;
        self.ping_rx = 0;
        self.rtt.reset();
        self.udp_tx = 0;
        self.udp_rx = 0;
        self.udp_delay.reset();
    }

    /// Rows `ping_*` (ping), `udp_tx` (UDP), `udp_rx` (always) and `udp_delay` (when a
    /// datagram arrived), over `secs` seconds.
    fn report(&self, at: &crate::part::At<'_>, out: &mut Report) {
        let (secs, path) = (at.secs, at.path);
        let per_s = |n: u64| if secs > 0.0 { n as f64 / secs } else { f64::NAN };
        if self.cfg.kind == AppKind::Ping {
            out.push(path, "ping_tx", "count", self.ping_tx as f64, "1");
            out.push(path, "ping_rx", "count", self.ping_rx as f64, "1");
            let loss = if self.ping_tx > 0 { 1.0 - self.ping_rx as f64 / self.ping_tx as f64 } else { f64::NAN };
            out.push(path, "ping_loss", "value", loss, "1");
            self.rtt.report(out, path, "ping_rtt", "s", 1e-12);
        }
        if self.cfg.kind == AppKind::Udp {
            out.push(path, "udp_tx", "count", self.udp_tx as f64, "1");
            out.push(path, "udp_tx", "rate", per_s(self.udp_tx), "1/s");
        }
        out.push(path, "udp_rx", "count", self.udp_rx as f64, "1");
        out.push(path, "udp_rx", "rate", per_s(self.udp_rx), "1/s");
        if self.udp_delay.tally().count() > 0 {
            self.udp_delay.report(out, path, "udp_delay", "s", 1e-12);
        }
    }
    fn series(&self) -> &'static [crate::series::SeriesDecl] {
        &super::SERIES[1..2]
    }
    fn sample(&self, _q: usize) -> f64 {
        self.udp_rx as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(kind: AppKind) -> AppConfig {
        AppConfig { kind, count: 3, interval: SimDuration(1_000), length: 64, timeout: SimDuration(500), udp_gap: None, udp_poisson: false, start: SimTime(100), stop: SimTime::MAX, reply: true, quantile_digits: None }
    }

    fn rng() -> Stream {
        atmsim_kernel::rng::stream(1, 0, "h", "app")
    }

    #[test]
    fn ping_sends_count_requests_and_books_replies_in_time() {
        let mut a = App::new(cfg(AppKind::Ping), rng());
        assert_eq!(a.first_tick(), Some(SimTime(100)));
        let t = a.tick(SimTime(100));
        assert_eq!(t, Tick { send: Some(Send { kind: Kind::EchoRequest, id: Some(0), data: 64 }), next: Some(SimTime(1_100)) });
        assert_eq!(a.tick(SimTime(1_100)).send.and_then(|s| s.id), Some(1));
        // The last request asks for no further tick; a stray tick sends nothing.
        assert_eq!(a.tick(SimTime(2_100)), Tick { send: Some(Send { kind: Kind::EchoRequest, id: Some(2), data: 64 }), next: None });
        assert_eq!(a.tick(SimTime(3_100)), Tick::default());
        // Reply 0 in 300 ps; reply 1 after the timeout; reply 2 never; an unknown id.
        assert_eq!(a.on_datagram(SimTime(400), Kind::EchoReply, 0, SimTime(0)), None);
        assert_eq!(a.on_datagram(SimTime(1_700), Kind::EchoReply, 1, SimTime(0)), None);
        assert_eq!(a.on_datagram(SimTime(1_700), Kind::EchoReply, 9, SimTime(0)), None);
        assert_eq!(a.ping_stats().1, 1, "a reply to a request never sent counts nothing");
        let (tx, rx, rtt) = a.ping_stats();
        assert_eq!((tx, rx, rtt.count(), rtt.mean()), (3, 1, 1, 300.0));
        let mut out = Report::default();
        crate::part::Part::report(&a, &crate::part::At { now: SimTime(0), secs: 1.0, path: "h" }, &mut out);
        let loss = out.rows.iter().find(|r| r.probe == "ping_loss").map(|r| r.value);
        assert_eq!(loss, Some(1.0 - 1.0 / 3.0));
        assert!(out.rows.iter().all(|r| r.probe != "udp_tx"));
    }

    #[test]
    fn replies_match_the_latest_request_with_their_16_bit_sequence_number() {
        let mut a = App::new(AppConfig { count: 70_000, interval: SimDuration(10), timeout: SimDuration(1_000_000), ..cfg(AppKind::Ping) }, rng());
        let mut t = SimTime(100);
        for _ in 0..65_540 {
            t = a.tick(t).next.unwrap_or(t);
        }
        // Requests k = 0..=65539 left at 100 + 10 k. Sequence number 2 is request
        // 65538 (sent at 655,480), not request 2; 65,535 is request 65535 (655,450).
        a.on_datagram(SimTime(655_487), Kind::EchoReply, 2, SimTime(0));
        a.on_datagram(SimTime(655_497), Kind::EchoReply, 65_535, SimTime(0));
        let (_, rx, rtt) = a.ping_stats();
        assert_eq!((rx, rtt.min()), (2, 7.0));
        assert_eq!(rtt.max(), 47.0);
    }

    fn rows(a: &App, probe: &str) -> Vec<(String, f64)> {
        let mut out = Report::default();
        crate::part::Part::report(a, &crate::part::At { now: SimTime(0), secs: 1.0, path: "h" }, &mut out);
        out.rows.iter().filter(|r| r.probe == probe).map(|r| (r.statistic.clone(), r.value)).collect()
    }

    #[test]
    fn udp_datagrams_book_their_delay_from_their_birth() {
        let mut a = App::new(cfg(AppKind::None), rng());
        assert!(rows(&a, "udp_delay").is_empty(), "no datagram, no delay rows");
        for (now, born) in [(1_000, 400), (2_000, 1_900), (3_000, 2_500)] {
            a.on_datagram(SimTime(now), Kind::Udp, 0, SimTime(born));
        }
        let got = rows(&a, "udp_delay");
        let stat = |n: &str| got.iter().find(|(s, _)| s == n).map(|r| r.1);
        assert_eq!((stat("count"), stat("min"), stat("max")), (Some(3.0), Some(100e-12), Some(600e-12)));
        assert!((stat("mean").unwrap_or(0.0) - 400e-12).abs() < 1e-24);
        assert_eq!(stat("p50"), None, "quantiles only when asked for");
    }

    #[test]
    fn with_quantile_digits_rtts_and_udp_delays_report_their_quantiles() {
        let mut a = App::new(AppConfig { count: 1_000, interval: SimDuration(1_000_000), timeout: SimDuration(1_000_000), quantile_digits: Some(3), ..cfg(AppKind::Ping) }, rng());
        let mut t = SimTime(0);
        // RTTs 1, 2, ..., 1000 ns; UDP delays 10, 20, ..., 10,000 ns
        for k in 0..1_000u64 {
            let sent = t;
            t = a.tick(t).next.unwrap_or(t);
            a.on_datagram(sent.plus(SimDuration((k + 1) * 1_000)), Kind::EchoReply, k as u16, SimTime(0));
            a.on_datagram(SimTime((k + 1) * 10_000), Kind::Udp, 0, SimTime(0));
        }
        for (probe, unit) in [("ping_rtt", 1e-9), ("udp_delay", 1e-8)] {
            let got = rows(&a, probe);
            let stat = |n: &str| got.iter().find(|(s, _)| s == n).map_or(f64::NAN, |r| r.1);
            // the exact sample quantiles of 1..=1000 units: 500, 900, 990, 999, 1000
            for (name, want) in [("p50", 500.0), ("p90", 900.0), ("p99", 990.0), ("p99_9", 999.0), ("p99_99", 1_000.0), ("p99_999", 1_000.0)] {
                let v = stat(name) / unit;
                assert!((v - want).abs() <= want * 1e-3, "{probe} {name}: {v} against {want}");
            }
            assert!((stat("max") / unit - 1_000.0).abs() < 1e-9, "{probe}");
        }
        crate::part::Part::reset_stats(&mut a, SimTime(0));
        assert!(rows(&a, "ping_rtt").iter().all(|(s, _)| !s.starts_with('p')), "reset empties the distributions");
    }

    #[test]
    fn every_host_answers_echo_requests_unless_told_not_to() {
        let mut a = App::new(cfg(AppKind::None), rng());
        assert_eq!(a.first_tick(), None);
        assert_eq!(a.on_datagram(SimTime(0), Kind::EchoRequest, 7, SimTime(0)), Some(Kind::EchoReply));
        assert_eq!(a.on_datagram(SimTime(0), Kind::Udp, 7, SimTime(0)), None);
        assert_eq!(a.udp_rx(), 1);
        let mut quiet = App::new(AppConfig { reply: false, ..cfg(AppKind::None) }, rng());
        assert_eq!(quiet.on_datagram(SimTime(0), Kind::EchoRequest, 7, SimTime(0)), None);
    }

    #[test]
    fn udp_blaster_runs_until_stop_evenly_or_with_exponential_gaps() {
        let udp = AppConfig { udp_gap: Some(SimDuration(1_000)), stop: SimTime(3_000), ..cfg(AppKind::Udp) };
        let mut a = App::new(udp.clone(), rng());
        let mut now = a.first_tick();
        let mut sent = 0;
        while let Some(t) = now {
            let tick = a.tick(t);
            if let Some(s) = tick.send {
                assert_eq!((s.kind, s.id, s.data), (Kind::Udp, None, 64));
                sent += 1;
            }
            now = tick.next;
        }
        // Ticks at 100, 1100, 2100 send; the one at 3100 is past stop.
        assert_eq!((sent, a.udp_tx()), (3, 3));
        // Poisson gaps: exponential with the same mean (10,000 gaps within 4 sd).
        let mut p = App::new(AppConfig { udp_poisson: true, stop: SimTime::MAX, ..udp }, rng());
        let (mut t, mut sum) = (SimTime(0), 0u64);
        for _ in 0..10_000 {
            let next = p.tick(t).next.unwrap_or(SimTime::MAX);
            sum += next.since(t).0;
            t = next;
        }
        let mean = sum as f64 / 10_000.0;
        assert!((mean - 1_000.0).abs() < 4.0 * 1_000.0 / 100.0, "{mean}");
        // A start at or after stop never ticks.
        let late = App::new(AppConfig { start: SimTime(5_000), stop: SimTime(5_000), ..cfg(AppKind::Udp) }, rng());
        assert_eq!(late.first_tick(), None);
    }
}
