//! The future-event list.
//!
//! Ordering rule, written down once: events are popped in increasing `(time, seq)`,
//! where `seq` is a counter incremented at every `schedule`. Two events for the same
//! instant therefore run in the order they were scheduled (FIFO on ties), whatever
//! component they target. This is the whole determinism contract of the kernel: with
//! the same inputs the same events are scheduled in the same order. (Timed deliveries
//! to passive components and the transmitters' departure-before-arrival rule are
//! written in `sim.rs` and docs/architecture.md, "Simultaneous events".)
//!
//! The heap holds the time as the key and `(seq, component, tag)` as a 16-byte payload,
//! no model data: components keep their own (cells in flight sit in the component's
//! FIFO) and the `u32` tag tells them which timer fired.

use crate::heap::KeyHeap;
use crate::time::SimTime;

/// Index of a component in the simulation.
pub type CompId = u32;

/// A scheduled event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    pub time: SimTime,
    pub seq: u64,
    pub comp: CompId,
    pub tag: u32,
}

/// What the heap carries beside the time.
#[derive(Clone, Copy, Debug, Default)]
struct Payload {
    seq: u64,
    comp: CompId,
    tag: u32,
}

impl Event {
    #[inline(always)]
    fn from_heap((time, p): (u64, Payload)) -> Event {
        Event { time: SimTime(time), seq: p.seq, comp: p.comp, tag: p.tag }
    }
    #[inline(always)]
    fn payload(&self) -> Payload {
        Payload { seq: self.seq, comp: self.comp, tag: self.tag }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
enum Current {
    #[default]
    None,
    /// The event being handled is the heap's top, and no other pending event shares
    /// its instant.
    Top,
    /// The event being handled is the front of `ready`.
    Ready,
}

/// The future-event list: a 4-ary heap on time ([`KeyHeap`]), a tie buffer, and a
/// staging area.
///
/// *Speed.* Heap comparisons look at the time only (one `u64` compare, as in a
/// hand-written loop). Ties are rare and are found cheaply: if no child of the root
/// has the root's time, no other pending event does (heap property). When some do,
/// all events of that instant are taken out, sorted by `seq` into `ready`, and handled
/// from there. And most events schedule exactly one follow-up (a source's next cell, a
/// transmitter's next end of transmission, a hold timer), so the kernel does not pop an
/// event before handling it: [`EventQueue::begin`] leaves it in place, the handler's
/// first schedule is *staged* in a slot (the rest in a list), and
/// [`EventQueue::finish`] replaces the top with it (one sift-down) and pushes the rest.
///
/// *Order.* Events come out in increasing `(time, seq)`: staged events get their `seq`
/// when scheduled, so one scheduled for the current instant runs after every event
/// already pending for it.
#[derive(Default)]
pub struct EventQueue {
    heap: KeyHeap<Payload>,
    ready: std::collections::VecDeque<Event>,
    /// Whether the handler running now has scheduled an event: the first one waits in
    /// the heap's staging slot.
    has_first: bool,
    /// The others, in order.
    staged: Vec<Event>,
    current: Current,
    in_event: bool,
    seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: KeyHeap::with_capacity(n), staged: Vec::with_capacity(16), ..Default::default() }
    }

    /// Schedules an event (staged while an event is being handled).
    #[inline(always)]
    pub fn schedule(&mut self, time: SimTime, comp: CompId, tag: u32) {
        let seq = self.seq;
        self.seq += 1;
        let ev = Event { time, seq, comp, tag };
        if !self.in_event {
            self.heap.push(time.0, ev.payload());
        } else if !self.has_first {
            self.heap.stage(time.0, ev.payload());
            self.has_first = true;
        } else {
            self.staged.push(ev);
        }
    }

    /// Finds the next event; `Top` if it can be handled in place.
    #[inline(always)]
    fn locate(&mut self) -> Option<(Event, Current)> {
        if let Some(&e) = self.ready.front() {
            return Some((e, Current::Ready));
        }
        let top = Event::from_heap(self.heap.peek()?);
        if !self.heap.root_key_shared() {
            return Some((top, Current::Top));
        }
        self.collect_ties(top.time);
        self.ready.front().map(|&e| (e, Current::Ready))
    }

    #[cold]
    fn collect_ties(&mut self, t: SimTime) {
        let mut same: Vec<Event> = Vec::new();
        while self.heap.peek().is_some_and(|e| e.0 == t.0) {
            if let Some(e) = self.heap.pop() {
                same.push(Event::from_heap(e));
            }
        }
        same.sort_unstable_by_key(|e| e.seq);
        self.ready.extend(same);
    }

    /// The next event, left in place until [`EventQueue::finish`].
    #[inline(always)]
    pub fn begin(&mut self) -> Option<Event> {
        let (e, cur) = self.locate()?;
        self.current = cur;
        self.in_event = true;
        Some(e)
    }

    /// Removes the event returned by `begin` and commits what its handling scheduled.
    #[inline(always)]
    pub fn finish(&mut self) {
        self.in_event = false;
        let has_first = std::mem::replace(&mut self.has_first, false);
        match self.current {
            Current::Top if has_first => self.heap.replace_top_with_staged(),
            Current::Top => {
                self.heap.pop();
            }
            Current::Ready | Current::None => {
                if self.current == Current::Ready {
                    self.ready.pop_front();
                }
                if has_first {
                    self.heap.push_staged();
                }
            }
        }
        self.current = Current::None;
        if !self.staged.is_empty() {
            self.commit_rest();
        }
    }

    fn commit_rest(&mut self) {
        for ev in self.staged.drain(..) {
            self.heap.push(ev.time.0, ev.payload());
        }
    }

    /// Removes and returns the next event.
    pub fn pop(&mut self) -> Option<Event> {
        let e = self.begin()?;
        self.finish();
        Some(e)
    }

    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        let h = self.heap.peek().map(|e| SimTime(e.0));
        match (self.ready.front(), h) {
            (Some(r), _) => Some(r.time),
            (None, h) => h,
        }
    }

    /// How many events have been scheduled so far (a handler that scheduled nothing
    /// leaves it unchanged).
    #[inline]
    pub fn scheduled(&self) -> u64 {
        self.seq
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.ready.len() + self.staged.len() + usize::from(self.has_first)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_time_order_and_fifo_on_ties() {
        let mut q = EventQueue::default();
        q.schedule(SimTime(10), 1, 0);
        q.schedule(SimTime(5), 2, 0);
        q.schedule(SimTime(10), 3, 0);
        q.schedule(SimTime(10), 0, 7);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time.0, e.comp)).collect();
        assert_eq!(order, vec![(5, 2), (10, 1), (10, 3), (10, 0)]);
    }

    #[test]
    fn ties_inside_an_event_run_after_pending_ones() {
        // Three events at t=5; the first schedules two more at t=5 while it runs.
        let mut q = EventQueue::default();
        q.schedule(SimTime(5), 1, 0);
        q.schedule(SimTime(9), 9, 0);
        q.schedule(SimTime(5), 2, 0);
        q.schedule(SimTime(5), 3, 0);
        let e = q.begin().unwrap();
        assert_eq!(e.comp, 1);
        q.schedule(SimTime(5), 4, 0);
        q.schedule(SimTime(5), 5, 0);
        q.finish();
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.comp).collect();
        assert_eq!(order, vec![2, 3, 4, 5, 9]);
    }

    #[test]
    fn staged_schedules_keep_the_order() {
        let mut q = EventQueue::default();
        q.schedule(SimTime(10), 1, 0);
        q.schedule(SimTime(20), 2, 0);
        let e = q.begin().unwrap();
        assert_eq!(e.comp, 1);
        q.schedule(SimTime(20), 3, 0); // tie with comp 2: must come after it
        q.schedule(SimTime(15), 4, 0);
        q.schedule(SimTime(10), 5, 0); // same instant as the current event: next
        q.finish();
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| e.comp).collect();
        assert_eq!(order, vec![5, 4, 2, 3]);
    }

    #[test]
    fn matches_a_sort_on_many_random_keys() {
        // Pseudo-random times with many ties, never before the last popped instant (as
        // in a simulation); the pop order must equal a stable sort on (time, seq).
        let mut q = EventQueue::default();
        let mut x: u64 = 12345;
        let mut expect = Vec::new();
        let mut now = 0u64;
        for i in 0..5000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = now + (x >> 33) % 40;
            q.schedule(SimTime(t), i, 0);
            expect.push((t, i));
            if i % 7 == 3 {
                // interleave pops with pushes
                let e = q.pop().unwrap();
                now = e.time.0;
                let pos = expect.iter().enumerate().min_by_key(|(_, &(t, id))| (t, id)).map(|(p, _)| p).unwrap();
                assert_eq!((e.time.0, e.comp), expect.remove(pos));
            }
        }
        expect.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time.0, e.comp)).collect();
        assert_eq!(got, expect);
    }
}
