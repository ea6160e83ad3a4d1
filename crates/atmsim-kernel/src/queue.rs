//! The future-event list.
//!
//! Ordering rule, written down once: events are popped in increasing `(time, seq)`,
//! where `seq` is a counter incremented at every `schedule`. Two events for the same
//! instant therefore run in the order they were scheduled (FIFO on ties), whatever
//! component they target. This is the whole determinism contract of the kernel: with
//! the same inputs the same events are scheduled in the same order. (Timed deliveries
//! to passive components and the transmitters' departure-before-arrival rule are
//! written in `sim/mod.rs` and docs/architecture.md, "Simultaneous events".)
//!
//! The heap holds the time as the key and `(seq, component, tag)` as a 16-byte payload,
//! no model data: components keep their own (cells in flight sit in the component's
//! FIFO) and the `u32` tag tells them which timer fired.
//!
//! *Many pending events* (issue 14, "scale"): with thousands of sources each holding
//! a timer, a heap's pop walks `log4(n)` levels that no longer fit in the caches. When
//! the heap passes [`FAR_FROM`] events, the queue splits at a *horizon*: events before
//! it stay in the heap, events at or after it go to a calendar of buckets ([`Far`]),
//! appended unsorted in O(1). When the heap runs dry the next non-empty bucket is
//! moved into it, and the horizon moves to that bucket's end. Every event before the
//! horizon is in the heap and every event at or after it is in the calendar, so the
//! heap's smallest `(time, seq)` is the queue's: the order is exactly the heap-only
//! order (tested against a sort, and every golden fingerprint is unchanged).

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
    /// The event being handled is the heap's top: no other pending event shares its
    /// instant, or it is the first scheduled of those that do.
    Top,
    /// The event being handled is the front of `ready`.
    Ready,
}

/// The future-event list: a 4-ary heap on time ([`KeyHeap`]), a tie buffer, and a
/// staging area.
///
/// *Speed.* Heap comparisons look at the time only (one `u64` compare, as in a
/// hand-written loop). Ties are rare and are found cheaply: if no child of the root
/// has the root's time, no other pending event does (heap property). When a few do
/// (at most [`crate::heap::TIE_CAP`]), the one with the smallest `seq` is moved to the
/// root ([`KeyHeap::root_tie_first`]) and handled in place; when more do, all events of
/// that instant are taken out, sorted by `seq` into `ready`, and handled from there.
/// And most events schedule exactly one follow-up (a source's next cell, a
/// transmitter's next end of transmission, a hold timer), so the kernel does not pop an
/// event before handling it: [`EventQueue::begin`] leaves it in place, the handler's
/// first schedule is *staged* in a slot (the rest in a list), and
/// [`EventQueue::finish`] replaces the top with it (one sift-down) and pushes the rest.
///
/// *Order.* Events come out in increasing `(time, seq)`: staged events get their `seq`
/// when scheduled, so one scheduled for the current instant runs after every event
/// already pending for it.
pub struct EventQueue {
    heap: KeyHeap<Payload>,
    /// Every event at or after this instant is in `far`, every other one in the heap
    /// (`u64::MAX`: no calendar).
    horizon: u64,
    far: Far,
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

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue::with_capacity(0)
    }
}

/// The heap's size at which the queue starts its calendar of far events: about
/// where the heap (24 bytes an event) outgrows a 1 MB L2 cache. Below it the heap is
/// faster (hold, 10,000 pending: 8.4 M events/s heap only, 5.9 with the calendar);
/// above it the calendar is (100,000 pending: 2.5 against 5.2; docs/log/performance.md).
pub const FAR_FROM: usize = 32_768;
/// Events per calendar bucket the bucket width aims at (the heap then holds about
/// this many events plus the near ones).
const PER_BUCKET: u64 = 32;

/// The calendar of far events: bucket `k` holds, unsorted, the events in
/// `[base + k·2^shift, base + (k+1)·2^shift)`; events past the last bucket wait in
/// `overflow` until the buckets are used up and a new calendar is laid out from them.
#[derive(Default)]
struct Far {
    buckets: Vec<Vec<Event>>,
    /// The next bucket to move into the heap.
    cursor: usize,
    base: u64,
    shift: u32,
    /// `base + buckets.len()·2^shift` (saturated): events at or after it overflow.
    end: u64,
    overflow: Vec<Event>,
    len: usize,
}

/// `base + k·2^shift`, saturated at `u64::MAX`.
fn bucket_start(base: u64, k: usize, shift: u32) -> u64 {
    (u128::from(base) + ((k as u128) << shift)).min(u128::from(u64::MAX)) as u64
}

impl Far {
    /// Lays out a calendar for `events` (all at or after their smallest time, which
    /// becomes `base`), reusing the buckets' memory.
    fn lay_out(&mut self, events: &mut Vec<Event>) {
        let lo = events.iter().map(|e| e.time.0).min().unwrap_or(0);
        let hi = events.iter().map(|e| e.time.0).max().unwrap_or(0);
        let n = events.len().max(1) as u64;
        let width = ((hi - lo) / n).saturating_mul(PER_BUCKET).max(1);
        self.shift = (64 - (width - 1).leading_zeros()).min(63);
        let count = (((hi - lo) >> self.shift) + 1) as usize;
        self.buckets.iter_mut().for_each(Vec::clear);
        if self.buckets.len() < count {
            self.buckets.resize_with(count, Vec::new);
        }
        self.buckets.truncate(count.max(1));
        self.base = lo;
        self.end = bucket_start(lo, self.buckets.len(), self.shift);
        self.cursor = 0;
        for e in events.drain(..) {
            self.buckets[((e.time.0 - lo) >> self.shift) as usize].push(e);
        }
    }

    /// The earliest far event's time.
    fn first_time(&self) -> Option<SimTime> {
        let bucket = self.buckets.iter().skip(self.cursor).find(|b| !b.is_empty());
        bucket.unwrap_or(&self.overflow).iter().map(|e| e.time).min()
    }

    #[inline]
    fn insert(&mut self, e: Event) {
        self.len += 1;
        if e.time.0 < self.end {
            let k = ((e.time.0 - self.base) >> self.shift) as usize;
            self.buckets[k].push(e);
        } else {
            self.overflow.push(e);
        }
    }
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: KeyHeap::with_capacity(n),
            horizon: u64::MAX,
            far: Far::default(),
            ready: Default::default(),
            has_first: false,
            staged: Vec::with_capacity(16),
            current: Current::None,
            in_event: false,
            seq: 0,
        }
    }

    /// Schedules an event (staged while an event is being handled).
    #[inline(always)]
    pub fn schedule(&mut self, time: SimTime, comp: CompId, tag: u32) {
        let seq = self.seq;
        self.seq += 1;
        let ev = Event { time, seq, comp, tag };
        if time.0 >= self.horizon {
            self.far.insert(ev);
        } else if !self.in_event {
            self.heap.push(time.0, ev.payload());
            self.grown();
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
        let top = match self.heap.peek() {
            Some(top) => Event::from_heap(top),
            None if self.far.len > 0 => {
                self.refill();
                Event::from_heap(self.heap.peek()?)
            }
            None => return None,
        };
        if !self.heap.root_key_shared() {
            return Some((top, Current::Top));
        }
        // A few events share the instant: the one scheduled first moves to the root
        // and is handled in place, like any other.
        if self.heap.root_tie_first(|a, b| a.seq < b.seq) {
            let top = Event::from_heap(self.heap.peek()?);
            return Some((top, Current::Top));
        }
        self.collect_ties(top.time);
        self.ready.front().map(|&e| (e, Current::Ready))
    }

    /// Moves every event of instant `t` out of the heap into `ready`, sorted by `seq`.
    /// (Ties are common where components work on a slot grid, e.g. a switch fabric and
    /// its ports: `ready` is empty here, so the events are sorted in place there, with
    /// no allocation.)
    #[cold]
    fn collect_ties(&mut self, t: SimTime) {
        while self.heap.peek().is_some_and(|e| e.0 == t.0) {
            if let Some(e) = self.heap.pop() {
                self.ready.push_back(Event::from_heap(e));
            }
        }
        self.ready.make_contiguous().sort_unstable_by_key(|e| e.seq);
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
                    self.grown();
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
        self.grown();
    }

    /// After the heap grew (never while the event being handled is its top): past
    /// [`FAR_FROM`] events with no calendar yet, its later events move into one. (A
    /// heap that runs dry takes the next bucket in `locate`.)
    #[inline(always)]
    fn grown(&mut self) {
        if self.heap.len() > FAR_FROM && self.horizon == u64::MAX {
            self.start_far();
        }
    }

    /// Moves the heap's events into a new calendar (then refills the heap from it).
    #[cold]
    fn start_far(&mut self) {
        let mut all = Vec::with_capacity(self.heap.len());
        while let Some(e) = self.heap.pop() {
            all.push(Event::from_heap(e));
        }
        self.far.len = all.len();
        self.far.lay_out(&mut all);
        self.horizon = self.far.base;
        self.refill();
    }

    /// Moves the next non-empty bucket into the heap (laying out a new calendar from
    /// the overflow when the buckets are used up), and the horizon to its end; with no
    /// far event left the calendar is switched off.
    #[cold]
    fn refill(&mut self) {
        loop {
            if let Some(b) = self.far.buckets.get_mut(self.far.cursor) {
                self.far.cursor += 1;
                self.horizon = bucket_start(self.far.base, self.far.cursor, self.far.shift);
                if b.is_empty() {
                    continue;
                }
                self.far.len -= b.len();
                for e in b.drain(..) {
                    self.heap.push(e.time.0, e.payload());
                }
                return;
            }
            if self.far.overflow.is_empty() {
                self.horizon = u64::MAX;
                self.far.len = 0;
                return;
            }
            let mut o = std::mem::take(&mut self.far.overflow);
            self.far.lay_out(&mut o);
            self.far.overflow = o;
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
            (None, Some(h)) => Some(h),
            (None, None) => self.far.first_time(),
        }
    }

    /// How many events have been scheduled so far (a handler that scheduled nothing
    /// leaves it unchanged).
    #[inline]
    pub fn scheduled(&self) -> u64 {
        self.seq
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.ready.len() + self.staged.len() + usize::from(self.has_first) + self.far.len
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

    /// Drives a queue with `pending` events outstanding, times spread over `spread`
    /// picoseconds with ties, some handlers scheduling several events (staged), and
    /// checks every pop against a sort on (time, seq). Returns the largest calendar
    /// size seen.
    fn against_a_sort(pending: u32, spread: u64, steps: u32) -> usize {
        against_a_sort_from(0, pending, spread, steps)
    }

    fn against_a_sort_from(origin: u64, pending: u32, spread: u64, steps: u32) -> usize {
        let mut q = EventQueue::default();
        let mut x: u64 = 987654321;
        let mut rnd = move || {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            x >> 33
        };
        let mut pending_set = std::collections::BTreeSet::new();
        let mut id = 0u32;
        let mut now = origin;
        for _ in 0..pending {
            let t = origin + rnd() % spread;
            q.schedule(SimTime(t), id, 0);
            pending_set.insert((t, u64::from(id)));
            id += 1;
        }
        let mut far_max = 0;
        for step in 0..steps {
            let Some(e) = q.begin() else { break };
            let first = pending_set.pop_first().unwrap();
            assert_eq!((e.time.0, e.seq), first, "step {step}");
            assert!(e.time.0 >= now);
            now = e.time.0;
            // 0, 1 or 3 follow-ups: now (a tie), near, or far.
            let k = [1, 1, 0, 3][(rnd() % 4) as usize];
            for j in 0..k {
                let t = match (rnd() % 5, j) {
                    (0, _) => now,
                    (1, _) => now + rnd() % 50,
                    _ => now + rnd() % spread,
                };
                q.schedule(SimTime(t), id, 0);
                pending_set.insert((t, u64::from(id)));
                id += 1;
            }
            q.finish();
            far_max = far_max.max(q.far.len);
            assert_eq!(q.len(), pending_set.len());
            assert_eq!(q.peek_time().map(|t| t.0), pending_set.first().map(|x| x.0));
        }
        while let Some(e) = q.pop() {
            assert_eq!((e.time.0, e.seq), pending_set.pop_first().unwrap());
        }
        assert!(pending_set.is_empty());
        far_max
    }

    #[test]
    fn the_far_calendar_keeps_the_heap_order() {
        // Enough pending events to start the calendar, with ties, staged events, long
        // gaps (overflow and new calendars) and a final drain that switches it off.
        let n = FAR_FROM as u32 + 2_000;
        assert!(against_a_sort(n, 1 << 30, 200_000) > FAR_FROM);
        assert!(against_a_sort(n, 30_000, 100_000) > 0, "dense ties");
        assert_eq!(against_a_sort(100, 1 << 20, 10_000), 0, "a small queue never starts the calendar");
        assert!(against_a_sort_from(u64::MAX - (1 << 40), n, 1 << 31, 50_000) > 0, "times near the end of the range");
    }

    /// Ties handled in place (a few events per instant: the first scheduled moves to
    /// the root) and taken out and sorted (more than `TIE_CAP` per instant) both keep
    /// the (time, seq) order, with handlers scheduling more events for their own instant.
    #[test]
    fn small_and_large_groups_of_ties_keep_the_order() {
        against_a_sort(64, 40, 50_000);
        against_a_sort(3, 2, 20_000);
        against_a_sort(2_000, 20, 50_000);
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
