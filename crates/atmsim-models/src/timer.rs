//! Timers with keys: the one way models arm, re-arm and cancel timers.
//!
//! The kernel's timers cannot be taken back: an event, once scheduled, fires. A model
//! that re-arms or cancels a timer therefore leaves events behind that must be
//! recognised as stale when they fire. These helpers keep what that takes, so that no
//! model keeps its own generation numbers or deadline checks:
//!
//! - [`Timer`] — one timer with a fixed tag, recognised by its deadline: arming returns
//!   a [`TimerKey`] (the instant it is due), [`Timer::cancel`] forgets it, and
//!   [`Timer::fire`] tells whether an event of this tag at `now` is the armed one.
//!   [`Timer::arm_earliest`] keeps one kernel event for the earliest of several
//!   deadlines (a TCP connection's fine timer).
//! - [`KeyedTimer`] — one timer whose every arming is a new key carried in the event's
//!   tag (even numbers, so odd tags stay free for the model's other timers); only the
//!   latest key is live: [`KeyedTimer::fire`] ignores the others. For a timer re-armed
//!   at instants that may repeat (an i-out-of-m decision slot).

use atmsim_kernel::SimTime;

use crate::kind::Cx;

/// What arming a timer returns: enough to cancel that arming, and to recognise its
/// event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerKey {
    /// A [`Timer`]'s arming: the instant it is due.
    Due(SimTime),
    /// A [`KeyedTimer`]'s arming: the tag its event carries.
    Tag(u32),
}

/// One timer with a fixed tag, recognised by its deadline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer {
    due: Option<SimTime>,
}

impl Timer {
    /// Arms the timer for `at` (an event with `tag` is scheduled); an earlier arming
    /// becomes stale.
    #[inline]
    pub fn arm(&mut self, at: SimTime, tag: u32, ctx: &mut Cx<'_>) -> TimerKey {
        self.due = Some(at);
        ctx.schedule_at(at, tag);
        TimerKey::Due(at)
    }

    /// Arms the timer for `at` unless it is already armed for an earlier instant (then
    /// no event is scheduled: the earlier one stands, and its handler re-arms).
    #[inline]
    pub fn arm_earliest(&mut self, at: SimTime, tag: u32, ctx: &mut Cx<'_>) -> Option<TimerKey> {
        if self.due.is_none_or(|d| at < d) {
            Some(self.arm(at, tag, ctx))
        } else {
            None
        }
    }

    /// Cancels the arming `key` (if it is still the armed one): its event will be stale.
    pub fn cancel(&mut self, key: TimerKey) {
        if key == TimerKey::Due(self.due.unwrap_or(SimTime::MAX)) {
            self.due = None;
        }
    }

    /// An event of this timer's tag fired at `now`: true if it is the armed one (the
    /// timer is then disarmed), false if it is stale.
    #[inline]
    pub fn fire(&mut self, now: SimTime) -> bool {
        if self.due == Some(now) {
            self.due = None;
            true
        } else {
            false
        }
    }

    /// When the timer is due, if armed.
    pub fn due(&self) -> Option<SimTime> {
        self.due
    }
}

/// One timer whose every arming is a new key, carried in the event's tag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyedTimer {
    last: u32,
    live: Option<u32>,
}

impl KeyedTimer {
    /// Arms the timer for `at` under a new key (the previous arming becomes stale).
    #[inline]
    pub fn arm(&mut self, at: SimTime, ctx: &mut Cx<'_>) -> TimerKey {
        self.last = self.last.wrapping_add(2);
        self.live = Some(self.last);
        ctx.schedule_at(at, self.last);
        TimerKey::Tag(self.last)
    }

    /// Cancels the arming `key` (if it is still the live one).
    pub fn cancel(&mut self, key: TimerKey) {
        if self.live.is_some_and(|t| key == TimerKey::Tag(t)) {
            self.live = None;
        }
    }

    /// An event with `tag` fired: true if it is the live arming (the timer is then
    /// disarmed), false if it is stale or not this timer's.
    #[inline]
    pub fn fire(&mut self, tag: u32) -> bool {
        if self.live == Some(tag) {
            self.live = None;
            true
        } else {
            false
        }
    }

    /// Whether an arming is live.
    pub fn is_armed(&self) -> bool {
        self.live.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_kernel::probe::Report;
    use atmsim_kernel::{Component, Ledger, PortId, Simulation};

    use crate::cell::Msg;

    /// Arms, re-arms and cancels at start; records which events fire live or stale.
    #[derive(Default)]
    struct Probe {
        timer: Timer,
        keyed: KeyedTimer,
        live: Vec<(u64, u32)>,
        stale: Vec<(u64, u32)>,
    }

    const T: u32 = 1; // the Timer's tag (odd: the KeyedTimer's are even)

    impl Component for Probe {
        type Msg = Msg;
        type Store = crate::observe::Store;
        fn start(&mut self, ctx: &mut Cx<'_>) {
            // Timer: armed for 10, then for 5 (earlier: a second event), then 20 is
            // later than what stands (no event); the event at 10 is stale.
            assert_eq!(self.timer.arm_earliest(SimTime(10), T, ctx), Some(TimerKey::Due(SimTime(10))));
            assert!(self.timer.arm_earliest(SimTime(5), T, ctx).is_some());
            assert_eq!(self.timer.arm_earliest(SimTime(20), T, ctx), None);
            // KeyedTimer: three armings at the same instant, the middle one cancelled
            // before the last: only the last is live.
            self.keyed.arm(SimTime(7), ctx);
            let k = self.keyed.arm(SimTime(7), ctx);
            self.keyed.cancel(k);
            assert!(!self.keyed.is_armed());
            let last = self.keyed.arm(SimTime(7), ctx);
            self.keyed.cancel(TimerKey::Tag(2)); // a stale key cancels nothing
            assert_eq!(last, TimerKey::Tag(6));
            assert!(self.keyed.is_armed());
        }
        fn on_timer(&mut self, tag: u32, ctx: &mut Cx<'_>) {
            let live = if tag == T { self.timer.fire(ctx.now) } else { self.keyed.fire(tag) };
            if live { &mut self.live } else { &mut self.stale }.push((ctx.now.0, tag));
            if tag == T && ctx.now == SimTime(5) {
                // Re-armed at 30 and cancelled: its event is stale.
                let k = self.timer.arm(SimTime(30), T, ctx);
                self.timer.cancel(k);
                assert_eq!(self.timer.due(), None);
            }
        }
        fn on_message(&mut self, _port: PortId, _msg: Msg, _ctx: &mut Cx<'_>) {}
        fn reset_stats(&mut self, _now: SimTime) {}
        fn report(&self, _now: SimTime, path: &str, out: &mut Report) {
            for &(t, tag) in &self.live {
                out.push(path, "live", &tag.to_string(), t as f64, "ps");
            }
            for &(t, tag) in &self.stale {
                out.push(path, "stale", &tag.to_string(), t as f64, "ps");
            }
        }
        fn ledger(&self, _l: &mut Ledger) {}
    }

    #[test]
    fn stale_firings_are_recognised_without_generation_numbers_in_the_model() {
        let sim = Simulation::new(vec![Probe::default()], vec!["p".into()], vec![vec![]]);
        let out = sim.run(SimTime(100), SimTime::ZERO, &mut |_, _| true).expect("run");
        let rows = |probe: &str| -> Vec<(f64, String)> { out.report.rows.iter().filter(|r| r.probe == probe).map(|r| (r.value, r.statistic.clone())).collect() };
        assert_eq!(rows("live"), vec![(5.0, "1".into()), (7.0, "6".into())]);
        assert_eq!(rows("stale"), vec![(7.0, "2".into()), (7.0, "4".into()), (10.0, "1".into()), (30.0, "1".into())]);
    }
}
