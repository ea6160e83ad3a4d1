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

impl Ord for Event {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed so that std's max-heap pops the earliest (time, seq) first.
        other
            .time
            .cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Binary-heap event queue with insertion-order tie breaking.
#[derive(Default)]
pub struct EventQueue {
    heap: BinaryHeap<Event>,
    seq: u64,
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue { heap: BinaryHeap::with_capacity(n), seq: 0 }
    }

    #[inline]
    pub fn schedule(&mut self, time: SimTime, comp: CompId, tag: u32) {
        let seq = self.seq;
        self.seq += 1;
        self.heap.push(Event { time, seq, comp, tag });
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        self.heap.pop()
    }

    #[inline]
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
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
}
