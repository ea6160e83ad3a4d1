//! The future-event list.
//!
//! Ordering rule, written down once: events are popped in increasing `(time, seq)`,
//! where `seq` is a counter incremented at every `schedule`. Two events for the same
//! instant therefore run in the order they were scheduled (FIFO on ties), whatever
//! component they target. This is the whole determinism contract of the kernel: with
//! the same inputs the same events are scheduled in the same order.
//!
//! An entry is 24 bytes and carries no payload: components keep their own data (cells in
//! flight sit in the component's FIFO) and a `u32` tag tells them which timer fired.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

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

#[inline(always)]
fn key(e: &Event) -> u128 {
    ((e.time.0 as u128) << 64) | e.seq as u128
}

impl Ord for Event {
    #[inline(always)]
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed so that std's max-heap pops the earliest (time, seq) first. One
        // 128-bit comparison compiles to branch-free code, unlike two chained ones.
        key(other).cmp(&key(self))
    }
}

impl PartialOrd for Event {
    #[inline(always)]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The future-event list: a binary heap on `(time, seq)` with a staging area.
///
/// Most events schedule exactly one follow-up (a source's next cell, a transmitter's
/// next end of transmission, a hold timer). So the kernel does not pop an event before
/// handling it: it [`EventQueue::begin`]s with the top still in the heap, the handler's
/// schedules are *staged*, and [`EventQueue::finish`] then replaces the top with the
/// first staged event (one sift-down) and pushes the rest. One heap operation per event
/// instead of two, and the order is unchanged: staged events get their `seq` when they
/// are scheduled, and none can precede the event being handled.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    staged: Vec<Event>,
    in_event: bool,
    seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), staged: Vec::with_capacity(16), in_event: false, seq: 0 }
    }

    /// Schedules an event (staged while an event is being handled).
    #[inline]
    pub fn schedule(&mut self, time: SimTime, comp: CompId, tag: u32) {
        let seq = self.seq;
        self.seq += 1;
        let ev = Event { time, seq, comp, tag };
        if self.in_event {
            self.staged.push(ev);
        } else {
            self.heap.push(ev);
        }
    }

    /// The next event, left in place until [`EventQueue::finish`].
    #[inline]
    pub fn begin(&mut self) -> Option<Event> {
        let top = self.heap.peek().copied();
        self.in_event = top.is_some();
        top
    }

    /// Removes the event returned by `begin` and commits what its handling scheduled.
    #[inline]
    pub fn finish(&mut self) {
        self.in_event = false;
        if self.staged.is_empty() {
            self.heap.pop();
            return;
        }
        let first = self.staged[0];
        let replaced = match self.heap.peek_mut() {
            Some(mut top) => {
                *top = first;
                true
            }
            None => false,
        };
        if !replaced {
            self.heap.push(first);
        }
        for i in 1..self.staged.len() {
            let ev = self.staged[i];
            self.heap.push(ev);
        }
        self.staged.clear();
    }

    /// Removes and returns the next event (no staging).
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.staged.len()
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
        // Pseudo-random times with many ties; the pop order must equal a stable sort.
        let mut q = EventQueue::default();
        let mut x: u64 = 12345;
        let mut expect = Vec::new();
        for i in 0..5000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let t = (x >> 33) % 300;
            q.schedule(SimTime(t), i, 0);
            expect.push((t, i));
            if i % 7 == 3 {
                // interleave pops with pushes
                let e = q.pop().unwrap();
                let pos = expect.iter().enumerate().min_by_key(|(_, &(t, id))| (t, id)).map(|(p, _)| p).unwrap();
                assert_eq!((e.time.0, e.comp), expect.remove(pos));
            }
        }
        expect.sort();
        let got: Vec<_> = std::iter::from_fn(|| q.pop()).map(|e| (e.time.0, e.comp)).collect();
        assert_eq!(got, expect);
    }
}
