//! A transmitter's cell buffer: one FIFO, or per-VC queues served round robin (with
//! priority levels and weights), and the port's per-VC counters.

use std::collections::VecDeque;

use atmsim_kernel::SimTime;

use crate::cell::Cell;

/// The cells waiting at a transmitter, and the order it serves them in, with the
/// port's per-VC counters (cells arrived, sent, dropped per output-side VC index,
/// `Cell::aux`; kept only when [`Transmitter::count_per_vc`] asked for them).
#[derive(Clone, Debug)]
pub enum CellBuffer {
    /// One FIFO; `capacity` counts every cell including the one in transmission.
    Fifo { queue: VecDeque<(Cell, SimTime)>, capacity: Option<usize>, counts: Vec<[u64; 3]> },
    /// One FIFO per VC (indexed by `Cell::aux`), served one cell per VC in round robin
    /// among the non-empty ones; each VC queue holds at most `vc_capacity` cells and
    /// the port at most `capacity`. With priority levels ([`CellBuffer::with_levels`])
    /// the non-empty VCs of level 0 are served first, round robin among them, then
    /// those of level 1, and so on (strict, non-preemptive: the cell in transmission —
    /// the one `pop` returns when it ends — is chosen when it starts, and a cell of a
    /// higher level arriving meanwhile waits for it). With weights
    /// ([`CellBuffer::with_weights`]) a VC at the front of its round robin sends up to
    /// its weight in cells before it goes to the back (weighted round robin).
    PerVc {
        queues: Vec<VcQueue>,
        /// The non-empty VCs of level 0 (of every VC without levels), in serving order.
        ring: VecDeque<u16>,
        total: usize,
        vc_capacity: Option<usize>,
        capacity: Option<usize>,
        /// Priority level per VC index (empty: every VC at level 0).
        levels: Vec<u8>,
        /// The non-empty VCs of levels 1, 2, …, in serving order.
        lower: Vec<VecDeque<u16>>,
        /// With levels, while cells wait: the level whose ring's first VC holds the
        /// cell in transmission.
        serving: u8,
        /// Cells per turn per VC index (empty: one each), and the cells each has sent
        /// in its current turn, less one.
        weights: Vec<u16>,
        sent: Vec<u16>,
    },
}

/// One VC's queue at a per-VC port, and its counters beside it: a cell's arrival and
/// its departure each touch one record. The head cell sits inline, so a VC with one
/// cell waiting (the common case when there are thousands of VCs) touches no other
/// memory (docs/log/performance.md, issue 14 "scale").
#[derive(Clone, Debug, Default)]
pub struct VcQueue {
    head: Option<(Cell, SimTime)>,
    rest: VecDeque<(Cell, SimTime)>,
    /// Cells arrived, sent, dropped (see [`CellBuffer`]).
    counts: [u64; 3],
}

impl VcQueue {
    #[inline(always)]
    fn len(&self) -> usize {
        usize::from(self.head.is_some()) + self.rest.len()
    }
    #[inline(always)]
    fn push(&mut self, x: (Cell, SimTime)) {
        if self.head.is_none() {
            self.head = Some(x);
        } else {
            self.rest.push_back(x);
        }
    }
    #[inline(always)]
    fn pop(&mut self) -> Option<(Cell, SimTime)> {
        let x = self.head.take();
        self.head = self.rest.pop_front();
        x
    }
    fn iter(&self) -> impl Iterator<Item = &(Cell, SimTime)> {
        self.head.iter().chain(self.rest.iter())
    }
}

impl CellBuffer {
    pub fn fifo(capacity: Option<usize>) -> Self {
        CellBuffer::Fifo { queue: VecDeque::with_capacity(capacity.unwrap_or(64).min(1 << 16)), capacity, counts: Vec::new() }
    }

    pub fn per_vc(vcs: usize, vc_capacity: Option<usize>, capacity: Option<usize>) -> Self {
        CellBuffer::PerVc { queues: vec![VcQueue::default(); vcs.max(1)], ring: VecDeque::new(), total: 0, vc_capacity, capacity, levels: Vec::new(), lower: Vec::new(), serving: 0, weights: Vec::new(), sent: Vec::new() }
    }

    /// A per-VC buffer whose VCs have the priority `levels` (per VC index, 0 served
    /// first; missing entries are 0). A FIFO buffer is left as it is.
    pub fn with_levels(mut self, given: Vec<u8>) -> Self {
        if let CellBuffer::PerVc { levels, lower, .. } = &mut self {
            let deepest = given.iter().copied().max().unwrap_or(0);
            if deepest > 0 {
                *lower = vec![VecDeque::new(); deepest as usize];
                *levels = given;
            }
        }
        self
    }

    /// A per-VC buffer whose VCs send up to `given` cells per turn of their round robin
    /// (per VC index, at least 1; missing entries are 1). A FIFO buffer is left as it is.
    pub fn with_weights(mut self, given: Vec<u16>) -> Self {
        if let CellBuffer::PerVc { weights, sent, .. } = &mut self {
            if given.iter().any(|&w| w > 1) {
                *sent = vec![0; given.len()];
                *weights = given;
            }
        }
        self
    }

    /// Port capacity (None: unlimited).
    pub fn capacity(&self) -> Option<usize> {
        match self {
            CellBuffer::Fifo { capacity, .. } | CellBuffer::PerVc { capacity, .. } => *capacity,
        }
    }

    /// Whether cells leave in the order they arrived: a FIFO, or per-VC queues that
    /// serve one VC only (round robin among one queue is FIFO). Only such a buffer
    /// may compute departures on arrival.
    pub fn in_arrival_order(&self) -> bool {
        match self {
            CellBuffer::Fifo { .. } => true,
            CellBuffer::PerVc { queues, .. } => queues.len() <= 1,
        }
    }

    /// The ring of priority level `l` (0: `ring`).
    #[inline(always)]
    fn ring_at<'a>(ring: &'a mut VecDeque<u16>, lower: &'a mut [VecDeque<u16>], l: u8) -> &'a mut VecDeque<u16> {
        match l {
            0 => ring,
            l => &mut lower[l as usize - 1],
        }
    }

    /// The level a transmission starting now serves: the first with a non-empty ring.
    fn first_level(ring: &VecDeque<u16>, lower: &[VecDeque<u16>]) -> u8 {
        if !ring.is_empty() {
            return 0;
        }
        lower.iter().position(|r| !r.is_empty()).map_or(0, |l| l as u8 + 1)
    }

    /// The most cells the buffer holds when it serves in arrival order
    /// ([`CellBuffer::in_arrival_order`]): a per-VC buffer's one queue is bounded by
    /// the VC's limit and the port's, whichever is smaller.
    pub fn fifo_capacity(&self) -> Option<usize> {
        match self {
            CellBuffer::Fifo { capacity, .. } => *capacity,
            CellBuffer::PerVc { vc_capacity, capacity, .. } => match (*vc_capacity, *capacity) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            },
        }
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        match self {
            CellBuffer::Fifo { queue, .. } => queue.len(),
            CellBuffer::PerVc { total, .. } => *total,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Queues the cell, or returns false (tail drop) when full.
    #[inline(always)]
    pub fn admit(&mut self, cell: Cell, now: SimTime) -> bool {
        match self {
            CellBuffer::Fifo { queue, capacity, .. } => {
                if capacity.is_some_and(|c| queue.len() >= c) {
                    return false;
                }
                queue.push_back((cell, now));
                true
            }
            CellBuffer::PerVc { queues, ring, total, vc_capacity, capacity, levels, lower, serving, .. } => {
                let i = cell.aux as usize;
                if i >= queues.len() {
                    queues.resize(i + 1, VcQueue::default());
                }
                let q = &mut queues[i];
                if capacity.is_some_and(|c| *total >= c) || vc_capacity.is_some_and(|c| q.len() >= c) {
                    return false;
                }
                if q.head.is_none() {
                    let l = levels.get(i).copied().unwrap_or(0);
                    if *total == 0 {
                        // the port was idle: this cell's transmission starts
                        *serving = l;
                    }
                    Self::ring_at(ring, lower, l).push_back(cell.aux);
                }
                q.push((cell, now));
                *total += 1;
                true
            }
        }
    }

    /// The next cell to transmit.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Cell, SimTime)> {
        match self {
            CellBuffer::Fifo { queue, .. } => queue.pop_front(),
            CellBuffer::PerVc { queues, ring, total, lower, serving, weights, sent, .. } => {
                let from = Self::ring_at(ring, lower, *serving);
                let i = from.pop_front()? as usize;
                let q = queues.get_mut(i)?;
                let c = q.pop()?;
                let more = q.head.is_some();
                match (weights.get(i), sent.get_mut(i)) {
                    // its turn goes on: it stays at the front
                    (Some(&w), Some(n)) if more && *n + 1 < w => {
                        *n += 1;
                        from.push_front(i as u16);
                    }
                    (_, n) => {
                        if let Some(n) = n {
                            *n = 0;
                        }
                        if more {
                            // back to the end of its level's round robin
                            from.push_back(i as u16);
                        }
                    }
                }
                *total -= 1;
                if !lower.is_empty() {
                    // the next transmission starts now: it serves the first level
                    // with cells waiting
                    *serving = Self::first_level(ring, lower);
                }
                Some(c)
            }
        }
    }

    /// When the cell that `pop` would return arrived.
    #[inline(always)]
    pub fn next_arrival(&self) -> Option<SimTime> {
        self.next().map(|x| x.1)
    }

    /// The cell that `pop` would return, with its arrival.
    #[inline(always)]
    pub fn next(&self) -> Option<&(Cell, SimTime)> {
        match self {
            CellBuffer::Fifo { queue, .. } => queue.front(),
            CellBuffer::PerVc { queues, ring, lower, serving, .. } => {
                let next = if *serving == 0 { ring.front() } else { lower.get(*serving as usize - 1)?.front() };
                next.and_then(|&i| queues.get(i as usize)?.head.as_ref())
            }
        }
    }

    pub fn for_each(&self, mut f: impl FnMut(&Cell)) {
        match self {
            CellBuffer::Fifo { queue, .. } => queue.iter().for_each(|(c, _)| f(c)),
            CellBuffer::PerVc { queues, .. } => queues.iter().flat_map(VcQueue::iter).for_each(|(c, _)| f(c)),
        }
    }

    /// Keeps per-VC counters for `vcs` output-side VC indices.
    pub(super) fn count_vcs(&mut self, vcs: usize) {
        match self {
            CellBuffer::Fifo { counts, .. } => *counts = vec![[0; 3]; vcs],
            CellBuffer::PerVc { queues, .. } => {
                if queues.len() < vcs {
                    queues.resize(vcs, VcQueue::default());
                }
            }
        }
    }

    /// Counts a cell of VC index `aux`: `what` 0 arrived, 1 sent, 2 dropped.
    #[inline(always)]
    pub(super) fn count(&mut self, aux: u16, what: usize) {
        let c = match self {
            CellBuffer::Fifo { counts, .. } => counts.get_mut(aux as usize),
            CellBuffer::PerVc { queues, .. } => queues.get_mut(aux as usize).map(|q| &mut q.counts),
        };
        if let Some(c) = c {
            c[what] += 1;
        }
    }

    /// The counters of VC index `aux`.
    pub(super) fn counts(&self, aux: usize) -> [u64; 3] {
        let c = match self {
            CellBuffer::Fifo { counts, .. } => counts.get(aux),
            CellBuffer::PerVc { queues, .. } => queues.get(aux).map(|q| &q.counts),
        };
        c.copied().unwrap_or([0; 3])
    }

    pub(super) fn reset_counts(&mut self) {
        match self {
            CellBuffer::Fifo { counts, .. } => counts.iter_mut().for_each(|c| *c = [0; 3]),
            CellBuffer::PerVc { queues, .. } => queues.iter_mut().for_each(|q| q.counts = [0; 3]),
        }
    }
}
