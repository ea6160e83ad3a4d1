//! A host's CPU as a part: a single server with a FIFO of jobs, each served in a fixed
//! time per job (the per-segment TCP + OS overhead of lazarou96 Table 1) plus a time per
//! octet of data the job touches (copies between user and kernel, the checksum, moving
//! the data to or from the adapter: the data-touching costs of the host profiles,
//! docs/models/host.md).
//!
//! ```text
//!   jobs ──► [ FIFO ─ server: `cost` + octets × `per_octet` per job ] ──► completed jobs
//! ```
//!
//! A job may name the connection it belongs to ([`Cpu::push_keyed`]): a job of another
//! connection than the one the server last served costs `switch_cost` more — the
//! non-data-touching work of changing connections (in 4.3BSD-derived stacks the PCB
//! lookup when `tcp_input`'s one-entry cache `tcp_last_inpcb` misses, waking another
//! receiving process and switching to it, refilling the caches with another
//! connection's state). It is charged when the job starts, since only the serving
//! order says whether the connection changed; 0 (the default) leaves every service
//! time as it was.
//!
//! Sans-IO core: [`Cpu::push`] queues a job, [`Cpu::start`] puts the head job in service
//! when the server is idle and says when it completes, [`Cpu::finish`] hands it back.
//! The part owns its completion timer ([`crate::timer::Timer`]): [`Cpu::kick`] starts
//! and arms, [`Cpu::complete`] recognises the event and finishes. Busy time is booked
//! when a job starts (the `cpu_util` series reads it so); [`Cpu::busy_time`] counts
//! only what has elapsed.

use std::collections::VecDeque;

use atmsim_kernel::{SimDuration, SimTime};

use crate::kind::Cx;
use crate::timer::Timer;

/// One server with a FIFO; `J` is the caller's job.
#[derive(Clone, Debug)]
pub struct Cpu<J> {
    /// Jobs waiting with their service times (without any switch cost) and their
    /// connections, the one in service (if any) at the head.
    queue: VecDeque<(J, SimDuration, Option<u64>)>,
    busy: bool,
    cost: SimDuration,
    /// Service time per octet a job touches, ps.
    per_octet: u64,
    /// Extra service time of a job whose connection differs from the last served one, ps.
    switch_cost: u64,
    /// The connection of the last keyed job put in service.
    last_key: Option<u64>,
    /// The service time of the job in service, switch cost included.
    in_service: SimDuration,
    timer: Timer,
    /// Service time booked since the start of the run (ps).
    booked: u64,
    /// `booked` at the last statistics reset.
    base: u64,
}

impl<J> Cpu<J> {
    /// An idle CPU taking `cost` per job.
    pub fn new(cost: SimDuration) -> Cpu<J> {
        Cpu::with_per_octet(cost, SimDuration(0))
    }

    /// An idle CPU taking `cost` per job and `per_octet` per octet the job touches.
    pub fn with_per_octet(cost: SimDuration, per_octet: SimDuration) -> Cpu<J> {
        Cpu {
            queue: VecDeque::new(),
            busy: false,
            cost,
            per_octet: per_octet.0,
            switch_cost: 0,
            last_key: None,
            in_service: SimDuration(0),
            timer: Timer::default(),
            booked: 0,
            base: 0,
        }
    }

    /// The same CPU charging `switch_cost` more for a job of another connection than
    /// the last one served (module doc).
    pub fn with_switch_cost(mut self, switch_cost: SimDuration) -> Cpu<J> {
        self.switch_cost = switch_cost.0;
        self
    }

    /// The service time of a job touching no data.
    pub fn cost(&self) -> SimDuration {
        self.cost
    }

    /// The service time of a job touching `octets` octets of data.
    pub fn cost_of(&self, octets: u64) -> SimDuration {
        SimDuration(self.cost.0.saturating_add(self.per_octet.saturating_mul(octets)))
    }

    /// Queues a job touching no data (it waits behind the one in service).
    pub fn push(&mut self, job: J) {
        self.push_sized(job, 0);
    }

    /// Queues a job touching `octets` octets of data.
    pub fn push_sized(&mut self, job: J, octets: u64) {
        let c = self.cost_of(octets);
        self.queue.push_back((job, c, None));
    }

    /// Queues a job touching `octets` octets of data for connection `key`: it costs
    /// the switch cost more if the job served before it belonged to another connection.
    pub fn push_keyed(&mut self, job: J, octets: u64, key: u64) {
        let c = self.cost_of(octets);
        self.queue.push_back((job, c, Some(key)));
    }

    /// If idle with work queued, puts the head job in service at `now` and returns
    /// when it completes; else `None`.
    pub fn start(&mut self, now: SimTime) -> Option<SimTime> {
        if self.busy {
            return None;
        }
        let &(_, base, key) = self.queue.front()?;
        let switched = matches!((key, self.last_key), (Some(k), Some(last)) if k != last);
        let c = if switched { SimDuration(base.0.saturating_add(self.switch_cost)) } else { base };
        if key.is_some() {
            self.last_key = key;
        }
        self.busy = true;
        self.in_service = c;
        self.booked += c.0;
        Some(now.plus(c))
    }

    /// The job in service completed: the server is idle and the job is handed back.
    pub fn finish(&mut self) -> Option<J> {
        self.busy = false;
        self.queue.pop_front().map(|(j, _, _)| j)
    }

    /// [`Cpu::start`], arming the completion timer (tag `tag`).
    pub fn kick(&mut self, tag: u32, ctx: &mut Cx<'_>) {
        if let Some(at) = self.start(ctx.now) {
            self.timer.arm(at, tag, ctx);
        }
    }

    /// The completion timer fired at `now`: the completed job ([`Cpu::finish`]), or
    /// `None` if the event is not the armed one. Call [`Cpu::kick`] afterwards.
    pub fn complete(&mut self, now: SimTime) -> Option<J> {
        if !self.timer.fire(now) {
            return None;
        }
        self.finish()
    }

    /// Whether a job is in service.
    pub fn is_busy(&self) -> bool {
        self.busy
    }

    /// Jobs held, the one in service included.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// Whether no job is held.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Service time booked since the start of the run, in ps (a job's whole cost is
    /// booked when it starts).
    pub fn booked(&self) -> u64 {
        self.booked
    }

    /// Service time elapsed since the last reset (the job in service not counted).
    pub fn busy_time(&self) -> SimDuration {
        let pending = if self.busy { self.in_service.0 } else { 0 };
        SimDuration((self.booked - self.base).saturating_sub(pending))
    }

    /// The fraction of `secs` seconds the CPU was busy ([`Cpu::busy_time`]); NaN for
    /// an empty interval.
    pub fn utilization(&self, secs: f64) -> f64 {
        if secs > 0.0 {
            self.busy_time().0 as f64 * 1e-12 / secs
        } else {
            f64::NAN
        }
    }

    /// Starts the busy time afresh.
    pub fn reset_stats(&mut self) {
        self.base = self.booked;
    }
}

impl<J> crate::part::Part for Cpu<J> {
    fn reset_stats(&mut self, _now: SimTime) {
        Cpu::reset_stats(self)
    }
    fn series(&self) -> &'static [crate::series::SeriesDecl] {
        &super::SERIES[0..1]
    }
    fn sample(&self, _q: usize) -> f64 {
        self.booked() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_are_served_one_at_a_time_in_order() {
        let mut cpu: Cpu<&str> = Cpu::new(SimDuration(10));
        assert_eq!(cpu.start(SimTime(0)), None); // nothing to do
        cpu.push("a");
        cpu.push("b");
        assert_eq!(cpu.start(SimTime(5)), Some(SimTime(15)));
        assert_eq!(cpu.start(SimTime(6)), None); // busy
        cpu.push("c");
        assert_eq!(cpu.len(), 3);
        assert_eq!(cpu.finish(), Some("a"));
        assert!(!cpu.is_busy());
        assert_eq!(cpu.start(SimTime(15)), Some(SimTime(25)));
        assert_eq!(cpu.finish(), Some("b"));
        assert_eq!(cpu.start(SimTime(30)), Some(SimTime(40)));
        assert_eq!(cpu.finish(), Some("c"));
        assert_eq!(cpu.start(SimTime(40)), None);
        assert!(cpu.is_empty());
    }

    #[test]
    fn busy_time_is_booked_at_start_and_counted_when_elapsed() {
        const C: u64 = 250_000_000; // 250 µs per job (a DEC 3000, lazarou96 Table 1)
        let mut cpu: Cpu<u8> = Cpu::new(SimDuration(C));
        cpu.push(1);
        cpu.start(SimTime(0));
        assert_eq!(cpu.booked(), C);
        assert_eq!(cpu.busy_time(), SimDuration(0)); // in service: not elapsed yet
        cpu.finish();
        assert_eq!(cpu.busy_time(), SimDuration(C));
        cpu.reset_stats();
        assert_eq!(cpu.busy_time(), SimDuration(0));
        cpu.push(2);
        cpu.start(SimTime(1_000));
        cpu.finish();
        assert_eq!((cpu.booked(), cpu.busy_time()), (2 * C, SimDuration(C)));
        // 250 µs busy in 1 ms: a quarter of the time.
        assert!((cpu.utilization(1e-3) - 0.25).abs() < 1e-12);
        assert!(cpu.utilization(0.0).is_nan());
    }

    #[test]
    fn a_job_costs_its_fixed_part_plus_its_octets() {
        // 700 µs per segment (a SPARC 5, lazarou96 Table 1) + 0.15 µs per octet.
        let mut cpu: Cpu<u8> = Cpu::with_per_octet(SimDuration(700_000_000), SimDuration(150_000));
        cpu.push_sized(1, 9140); // a full segment: 700 + 1371 µs
        cpu.push(2); // an ACK: 700 µs
        assert_eq!(cpu.start(SimTime(0)), Some(SimTime(2_071_000_000)));
        // Booked at start; the job in service is not yet elapsed.
        assert_eq!((cpu.booked(), cpu.busy_time()), (2_071_000_000, SimDuration(0)));
        assert_eq!(cpu.finish(), Some(1));
        assert_eq!(cpu.start(SimTime(2_071_000_000)), Some(SimTime(2_771_000_000)));
        assert_eq!(cpu.finish(), Some(2));
        assert_eq!(cpu.busy_time(), SimDuration(2_771_000_000));
        assert_eq!(cpu.cost_of(0), cpu.cost());
    }

    #[test]
    fn a_job_of_another_connection_costs_the_switch_cost_more() {
        // 550 µs per segment (a SPARC 10, lazarou96 Table 1), 100 µs per change of
        // connection; driven job by job.
        const SEG: u64 = 550_000_000;
        const SW: u64 = 100_000_000;
        let mut cpu: Cpu<&str> = Cpu::new(SimDuration(SEG)).with_switch_cost(SimDuration(SW));
        cpu.push_keyed("a1", 0, 1);
        cpu.push_keyed("a2", 0, 1);
        cpu.push_keyed("b1", 0, 2);
        cpu.push_keyed("a3", 0, 1);
        cpu.push("untagged");
        cpu.push_keyed("a4", 0, 1);
        // The first job has no predecessor: no switch.
        assert_eq!(cpu.start(SimTime(0)), Some(SimTime(SEG)));
        assert_eq!(cpu.finish(), Some("a1"));
        // Same connection: no switch.
        assert_eq!(cpu.start(SimTime(SEG)), Some(SimTime(2 * SEG)));
        assert_eq!(cpu.finish(), Some("a2"));
        // Connection 2 after 1, then 1 after 2: a switch each.
        assert_eq!(cpu.start(SimTime(2 * SEG)), Some(SimTime(3 * SEG + SW)));
        assert_eq!(cpu.busy_time(), SimDuration(2 * SEG)); // in service: not yet elapsed
        assert_eq!(cpu.finish(), Some("b1"));
        assert_eq!(cpu.busy_time(), SimDuration(3 * SEG + SW));
        assert_eq!(cpu.start(SimTime(3 * SEG + SW)), Some(SimTime(4 * SEG + 2 * SW)));
        assert_eq!(cpu.finish(), Some("a3"));
        // A job of no connection pays none and leaves the last connection as it was.
        assert_eq!(cpu.start(SimTime(4 * SEG + 2 * SW)), Some(SimTime(5 * SEG + 2 * SW)));
        assert_eq!(cpu.finish(), Some("untagged"));
        assert_eq!(cpu.start(SimTime(5 * SEG + 2 * SW)), Some(SimTime(6 * SEG + 2 * SW)));
        assert_eq!(cpu.finish(), Some("a4"));
        assert_eq!(cpu.booked(), 6 * SEG + 2 * SW);
    }

    #[test]
    fn without_a_switch_cost_keyed_jobs_cost_what_unkeyed_ones_do() {
        let mut keyed: Cpu<u8> = Cpu::with_per_octet(SimDuration(550_000_000), SimDuration(20_000));
        let mut plain: Cpu<u8> = Cpu::with_per_octet(SimDuration(550_000_000), SimDuration(20_000));
        let mut t = (SimTime(0), SimTime(0));
        for (i, octets) in [9140u64, 0, 9140, 9140, 0].into_iter().enumerate() {
            keyed.push_keyed(i as u8, octets, i as u64 % 2);
            plain.push_sized(i as u8, octets);
            t = (keyed.start(t.0).unwrap_or(t.0), plain.start(t.1).unwrap_or(t.1));
            assert_eq!(t.0, t.1);
            assert_eq!((keyed.finish(), plain.finish()), (Some(i as u8), Some(i as u8)));
        }
        assert_eq!(keyed.booked(), plain.booked());
    }
}
