//! The SAR protocol processor's forward pipeline (buddhikot92 section 5, Figure 10),
//! sans-IO: per connection, the five state tables — queue number, queue status, frame
//! status, expected sequence number, start sequence number (the last two kept by the
//! WUCS [`Reassembler`]) — over a reassembly buffer of `queues` queues of `queue_cells`
//! cells each (the paper: two maximum-size FDDI frames per connection).
//!
//! A cell is written to the connection's current queue (queue number); when its segment
//! closes the queue becomes busy (it holds a completely reassembled frame) and a read
//! request goes to the MPP; the next segment is assembled in an idle queue. With no
//! idle queue, or a full one, the cell is dropped: cell loss in the SPP. A segment that
//! lost a cell is marked in error (frame status) and the rest of it is discarded; it
//! is still handed to the MPP, which drops it (frame loss in the MPP). The MPP's
//! acknowledgement ([`Spp::ack`]) makes the queue idle again.
//!
//! A segment whose first cells found no idle queue takes the next one that frees and
//! writes nothing into it (the rest is discarded). What happens to that empty queue the
//! text leaves open ([`Spp::free_empty`], docs/models/gateway.md): by default it is
//! held like any frame in error — busy, read request, dropped by the MPP (the Frame
//! Status table's frame with missing cells); with `free_empty` an empty queue is idle
//! (the Queue Status table: "idle if it is empty"): no read request, a lost frame.

use atmsim_kernel::SimTime;

use super::wucs_sar::{Fate, Reassembler, SarCell, Segment};

/// Queue status table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueStatus {
    /// Empty or holding a partial frame.
    Idle,
    /// Holding a completely reassembled frame, waiting for the MPP to read it.
    Busy,
}

/// What became of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CellFate {
    /// Written to queue `q`.
    Written(u8),
    /// No idle queue, or the queue is full: cell loss in the SPP.
    BufferFull,
    /// Its segment is in error: discarded.
    Discarded,
}

/// A read request to the MPP: one closed segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub conn: u32,
    pub queue: u8,
    /// Cells in the queue.
    pub cells: u32,
    /// Frame status: InError.
    pub in_error: bool,
    /// Arrival of the segment's first written cell.
    pub first: SimTime,
}

/// The outcome of one cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SppOut {
    pub fate: Option<CellFate>,
    /// Up to two segments closed (one cut short by this cell, one completed by it).
    pub requests: [Option<Request>; 2],
    /// Segments closed with no queue at all (every cell dropped): lost frames.
    pub lost_frames: u32,
}

/// One connection's tables.
#[derive(Clone, Debug)]
pub struct Conn {
    reasm: Reassembler,
    /// Queue number table: the queue being assembled.
    pub queue_number: Option<u8>,
    /// Queue status table.
    pub queue_status: Vec<QueueStatus>,
    /// Frame status table: true = InError.
    pub frame_error: Vec<bool>,
    /// Cells in each queue.
    pub fill: Vec<u32>,
    first: Vec<SimTime>,
    /// A cell of the open segment was dropped before it had a queue.
    lost_mid: bool,
}

impl Conn {
    /// Expected sequence number table entry.
    pub fn expected(&self) -> Option<u32> {
        self.reasm.expected()
    }
    /// Start sequence number table entry (the next segment's first cell).
    pub fn next_start(&self) -> Option<u32> {
        self.reasm.next_start()
    }
}

/// The SPP's forward pipeline for all connections.
#[derive(Clone, Debug)]
pub struct Spp {
    pub conns: Vec<Conn>,
    queue_cells: u32,
    /// A segment that closes with no cell in its queue leaves the queue idle and sends
    /// no read request (module doc); false: the queue is held like any frame in error.
    pub free_empty: bool,
}

impl Spp {
    /// `conns` connections of segments of at most `seg_cells` cells, each with `queues`
    /// reassembly queues of `queue_cells` cells.
    pub fn new(conns: usize, seg_cells: u32, queues: usize, queue_cells: u32, modulus: u32) -> Spp {
        let c = Conn {
            reasm: Reassembler::new(seg_cells, modulus),
            queue_number: Some(0),
            queue_status: vec![QueueStatus::Idle; queues],
            frame_error: vec![false; queues],
            fill: vec![0; queues],
            first: vec![SimTime::ZERO; queues],
            lost_mid: false,
        };
        Spp { conns: vec![c; conns], queue_cells, free_empty: false }
    }

    /// Cells held in connection `i`'s queues.
    pub fn held(&self, i: usize) -> u64 {
        self.conns[i].fill.iter().map(|&n| u64::from(n)).sum()
    }

    fn close(&mut self, i: usize, seg: Segment, out: &mut SppOut) {
        let c = &mut self.conns[i];
        match c.queue_number {
            Some(q) if self.free_empty && c.fill[q as usize] == 0 => {
                c.frame_error[q as usize] = false;
                c.queue_number = None;
                out.lost_frames += 1;
            }
            Some(q) => {
                let qi = q as usize;
                c.queue_status[qi] = QueueStatus::Busy;
                let r = Request { conn: i as u32, queue: q, cells: c.fill[qi], in_error: seg.in_error || c.frame_error[qi], first: c.first[qi] };
                if out.requests[0].is_none() { out.requests[0] = Some(r) } else { out.requests[1] = Some(r) }
                c.queue_number = None;
            }
            None => out.lost_frames += 1,
        }
        c.lost_mid = false;
    }

    /// Picks an idle queue for the open segment, if there is one.
    fn pick(&mut self, i: usize) -> Option<u8> {
        let c = &mut self.conns[i];
        if c.queue_number.is_none() {
            if let Some(q) = c.queue_status.iter().position(|s| *s == QueueStatus::Idle) {
                c.queue_number = Some(q as u8);
                c.fill[q] = 0;
                c.frame_error[q] = c.lost_mid;
            }
        }
        c.queue_number
    }

    /// One cell of connection `i` arriving at `now`.
    pub fn on_cell(&mut self, i: usize, sar: SarCell, now: SimTime) -> SppOut {
        let mut out = SppOut::default();
        let rx = self.conns[i].reasm.on_cell(sar);
        if let Some(cut) = rx.cut {
            self.close(i, cut, &mut out);
        }
        let q = self.pick(i);
        let cap = self.queue_cells;
        let c = &mut self.conns[i];
        let fate = match q {
            _ if rx.fate == Fate::Discarded => CellFate::Discarded,
            None => {
                c.lost_mid = true;
                CellFate::BufferFull
            }
            Some(q) => {
                let qi = q as usize;
                if c.frame_error[qi] {
                    CellFate::Discarded
                } else if c.fill[qi] >= cap {
                    c.frame_error[qi] = true;
                    CellFate::BufferFull
                } else {
                    if c.fill[qi] == 0 {
                        c.first[qi] = now;
                    }
                    c.fill[qi] += 1;
                    CellFate::Written(q)
                }
            }
        };
        out.fate = Some(fate);
        if let Some(seg) = rx.closed {
            self.close(i, seg, &mut out);
        }
        out
    }

    /// The MPP's acknowledgement: queue `q` of connection `i` has been read; it is idle.
    pub fn ack(&mut self, i: usize, q: u8) {
        let c = &mut self.conns[i];
        c.queue_status[q as usize] = QueueStatus::Idle;
        c.fill[q as usize] = 0;
        c.frame_error[q as usize] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(seq: u32, first: bool, more: bool) -> SarCell {
        SarCell { seq, first, more }
    }
    const T: SimTime = SimTime(7);

    #[test]
    fn a_whole_segment_fills_queue_0_and_requests_a_read() {
        let mut s = Spp::new(1, 3, 2, 4, 256);
        assert_eq!(s.on_cell(0, cell(0, true, true), T).fate, Some(CellFate::Written(0)));
        assert_eq!(s.conns[0].expected(), Some(1));
        assert_eq!(s.conns[0].next_start(), Some(3));
        s.on_cell(0, cell(1, false, true), T);
        let out = s.on_cell(0, cell(2, false, false), T);
        assert_eq!(out.requests[0], Some(Request { conn: 0, queue: 0, cells: 3, in_error: false, first: T }));
        let c = &s.conns[0];
        assert_eq!(c.queue_status, vec![QueueStatus::Busy, QueueStatus::Idle]);
        assert_eq!(c.queue_number, None);
        // The next segment goes to queue 1.
        assert_eq!(s.on_cell(0, cell(3, true, true), T).fate, Some(CellFate::Written(1)));
        assert_eq!(s.conns[0].queue_number, Some(1));
    }

    #[test]
    fn with_both_queues_busy_cells_are_lost_and_the_frame_is_in_error() {
        let mut s = Spp::new(1, 2, 2, 2, 256);
        for k in 0..4 {
            s.on_cell(0, cell(k, k % 2 == 0, k % 2 == 0), T);
        }
        assert_eq!(s.conns[0].queue_status, vec![QueueStatus::Busy, QueueStatus::Busy]);
        assert_eq!(s.on_cell(0, cell(4, true, true), T).fate, Some(CellFate::BufferFull));
        // The MPP reads queue 0 mid-segment: the rest of the segment goes there, in error.
        s.ack(0, 0);
        assert_eq!(s.conns[0].queue_status[0], QueueStatus::Idle);
        let out = s.on_cell(0, cell(5, false, false), T);
        assert_eq!(out.fate, Some(CellFate::Discarded));
        assert_eq!(out.requests[0].map(|r| (r.queue, r.cells, r.in_error)), Some((0, 0, true)));
    }

    #[test]
    fn free_empty_leaves_a_queue_the_segment_wrote_nothing_into_idle() {
        let mut s = Spp::new(1, 2, 2, 2, 256);
        s.free_empty = true;
        for k in 0..4 {
            s.on_cell(0, cell(k, k % 2 == 0, k % 2 == 0), T);
        }
        assert_eq!(s.on_cell(0, cell(4, true, true), T).fate, Some(CellFate::BufferFull));
        s.ack(0, 0);
        // The rest of the segment is discarded in queue 0, which stays empty: at the
        // segment's end it is idle, no read request goes to the MPP, one frame is lost.
        let out = s.on_cell(0, cell(5, false, false), T);
        assert_eq!(out.fate, Some(CellFate::Discarded));
        assert_eq!(out.requests, [None, None]);
        assert_eq!(out.lost_frames, 1);
        assert_eq!(s.conns[0].queue_status, vec![QueueStatus::Idle, QueueStatus::Busy]);
        assert_eq!(s.conns[0].queue_number, None);
        // The next segment takes queue 0, with a clean frame status.
        assert_eq!(s.on_cell(0, cell(6, true, true), T).fate, Some(CellFate::Written(0)));
        assert!(!s.conns[0].frame_error[0]);
    }

    #[test]
    fn free_empty_still_hands_a_frame_in_error_with_cells_to_the_mpp() {
        let mut s = Spp::new(1, 8, 2, 2, 256);
        s.free_empty = true;
        s.on_cell(0, cell(0, true, true), T);
        s.on_cell(0, cell(1, false, true), T);
        assert_eq!(s.on_cell(0, cell(2, false, true), T).fate, Some(CellFate::BufferFull));
        let out = s.on_cell(0, cell(3, false, false), T);
        assert_eq!(out.requests[0].map(|r| (r.cells, r.in_error)), Some((2, true)));
        assert_eq!(out.lost_frames, 0);
    }

    #[test]
    fn a_segment_with_no_queue_at_all_is_a_lost_frame() {
        let mut s = Spp::new(1, 1, 1, 1, 256);
        s.on_cell(0, cell(0, true, false), T);
        let out = s.on_cell(0, cell(1, true, false), T);
        assert_eq!(out.fate, Some(CellFate::BufferFull));
        assert_eq!(out.lost_frames, 1);
        assert_eq!(out.requests, [None, None]);
    }

    #[test]
    fn a_full_queue_drops_the_cell_and_marks_the_frame_in_error() {
        let mut s = Spp::new(1, 8, 2, 2, 256);
        s.on_cell(0, cell(0, true, true), T);
        s.on_cell(0, cell(1, false, true), T);
        assert_eq!(s.on_cell(0, cell(2, false, true), T).fate, Some(CellFate::BufferFull));
        assert!(s.conns[0].frame_error[0]);
        let out = s.on_cell(0, cell(3, false, false), T);
        assert_eq!(out.fate, Some(CellFate::Discarded));
        assert_eq!(out.requests[0].map(|r| (r.cells, r.in_error)), Some((2, true)));
    }

    #[test]
    fn a_sequence_gap_reaches_the_mpp_as_frame_status_in_error() {
        let mut s = Spp::new(1, 3, 2, 4, 256);
        s.on_cell(0, cell(0, true, true), T);
        // Cell 1 lost upstream.
        assert_eq!(s.on_cell(0, cell(2, false, false), T).requests[0].map(|r| (r.cells, r.in_error)), Some((1, true)));
    }
}
