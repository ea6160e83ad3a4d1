//! The SPP–MPP handshake and the MPP's forward pipeline (buddhikot92 section 5,
//! Figure 11), sans-IO.
//!
//! Read requests from the SPP wait in a FIFO. The node processor (the NPE, which also
//! stands for the frame copy) serves one request at a time; the MPP acknowledges a
//! read — and so lets the NPE start it — only while the transmit buffer has room for a
//! frame: while it is full the acknowledgement is held (the non-work-conserving
//! service the paper stresses, section 6.4). Blocks after the node processor, in the
//! paper's order: MPP handshake, Drop Frame? (segments marked InError are dropped:
//! frame loss in the MPP), ICXT lookup, FDDI frame fields, header build; a frame
//! written to the transmit buffer holds one of its `tx_frames` places until the FDDI
//! MAC has sent it ([`Mpp::sent`]).
//!
//! Where Drop Frame? sits is read two ways ([`InError`]). Section 5 puts the NPE delay
//! "in SPP-MPP acknowledgment path" and has Drop Frame? discard the MCHIP segment the
//! SPP reads after the acknowledgement, behind the node processor (Figure 11), so a
//! segment in error takes its turn in the FIFO and the NPE's time before it is dropped
//! (`Serve`, the default: docs/models/gateway.md says why); sections 6.3 and 7 describe the NPE as
//! handling the MPP's "segment write requests" to "access the transmit buffer", which a
//! segment in error never makes, so the MPP drops it on the frame status and
//! acknowledges it at once, without the NPE or a transmit buffer place (`Skip`).

use std::collections::VecDeque;

use super::spp::Request;

/// The forward MPP: request FIFO, node processor, transmit buffer occupancy.
#[derive(Clone, Debug)]
pub struct Mpp {
    /// What the NPE does with a segment marked InError.
    pub in_error: InError,
    pub waiting: VecDeque<Request>,
    /// The request the node processor is serving.
    pub serving: Option<Request>,
    /// Frames in the transmit buffer (written, not yet sent by the MAC).
    pub tx_used: u32,
    pub tx_frames: u32,
}

/// Where Drop Frame? acts on a segment marked InError (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InError {
    /// Section 5 and Figure 11's order (the default): the NPE serves it (FIFO turn, service time, held while
    /// the transmit buffer is full), then Drop Frame? drops it.
    Serve,
    /// Sections 6.3 and 7: only segments written to the transmit buffer are NPE
    /// requests; one in error is dropped and acknowledged when its request arrives.
    Skip,
}

/// What the caller does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Nothing to start (idle, or the head request is held: transmit buffer full).
    Wait,
    /// Start serving this request now (its service time is the caller's).
    Serve(Request),
    /// A segment in error dropped before the NPE (`InError::Skip`): acknowledge it to
    /// the SPP now; the node processor's state did not change.
    Dropped(Request),
}

impl Mpp {
    pub fn new(tx_frames: u32) -> Mpp {
        Mpp::with(tx_frames, InError::Serve)
    }

    pub fn with(tx_frames: u32, in_error: InError) -> Mpp {
        Mpp { in_error, waiting: VecDeque::new(), serving: None, tx_used: 0, tx_frames }
    }

    /// The head request is held because the transmit buffer is full.
    pub fn holding(&self) -> bool {
        self.serving.is_none() && !self.waiting.is_empty() && self.tx_used >= self.tx_frames
    }

    fn next(&mut self) -> Step {
        if self.serving.is_some() || self.tx_used >= self.tx_frames {
            return Step::Wait;
        }
        match self.waiting.pop_front() {
            Some(r) => {
                // A good frame takes its place in the transmit buffer now.
                self.tx_used += u32::from(!r.in_error);
                self.serving = Some(r);
                Step::Serve(r)
            }
            None => Step::Wait,
        }
    }

    /// A read request from the SPP.
    pub fn request(&mut self, r: Request) -> Step {
        if r.in_error && self.in_error == InError::Skip {
            return Step::Dropped(r);
        }
        self.waiting.push_back(r);
        self.next()
    }

    /// The node processor finished: the request served (acknowledge it to the SPP;
    /// drop it if in error, else build and write the frame) and what to start next.
    pub fn served(&mut self) -> (Option<Request>, Step) {
        let done = self.serving.take();
        (done, self.next())
    }

    /// The MAC sent a frame from the transmit buffer: a place is free.
    pub fn sent(&mut self) -> Step {
        self.tx_used = self.tx_used.saturating_sub(1);
        self.next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use atmsim_kernel::SimTime;

    fn req(conn: u32, in_error: bool) -> Request {
        Request { conn, queue: 0, cells: 85, in_error, first: SimTime::ZERO }
    }

    #[test]
    fn requests_are_served_one_at_a_time_in_order() {
        let mut m = Mpp::new(4);
        assert_eq!(m.request(req(1, false)), Step::Serve(req(1, false)));
        assert_eq!(m.request(req(2, false)), Step::Wait);
        assert_eq!(m.served(), (Some(req(1, false)), Step::Serve(req(2, false))));
        assert_eq!(m.served(), (Some(req(2, false)), Step::Wait));
        assert_eq!(m.tx_used, 2);
    }

    #[test]
    fn acknowledgements_are_held_while_the_transmit_buffer_is_full() {
        let mut m = Mpp::new(2);
        m.request(req(1, false));
        m.request(req(2, false));
        m.request(req(3, false));
        m.served(); // 1 written; 2 starts
        assert_eq!(m.served(), (Some(req(2, false)), Step::Wait), "two frames in a buffer of two: 3 is held");
        assert!(m.holding());
        // The MAC sends one frame: the held request starts.
        assert_eq!(m.sent(), Step::Serve(req(3, false)));
        assert!(!m.holding());
    }

    #[test]
    fn a_frame_in_error_takes_no_place_but_waits_its_turn() {
        let mut m = Mpp::new(1);
        m.request(req(1, false));
        assert_eq!(m.request(req(2, true)), Step::Wait);
        assert_eq!(m.served().1, Step::Wait, "buffer full: even the frame in error is held");
        assert_eq!(m.sent(), Step::Serve(req(2, true)));
        assert_eq!(m.tx_used, 0);
        assert_eq!(m.request(req(3, false)), Step::Wait);
        assert_eq!(m.served(), (Some(req(2, true)), Step::Serve(req(3, false))));
    }

    #[test]
    fn skip_drops_a_segment_in_error_without_the_npe_even_when_the_buffer_is_full() {
        let mut m = Mpp::with(1, InError::Skip);
        assert_eq!(m.request(req(1, false)), Step::Serve(req(1, false)));
        // The NPE is busy and the transmit buffer is full: a segment in error is still
        // dropped (and acknowledged) at once, and takes no place in the FIFO.
        assert_eq!(m.request(req(2, true)), Step::Dropped(req(2, true)));
        assert!(m.waiting.is_empty());
        assert_eq!(m.request(req(3, false)), Step::Wait);
        assert_eq!(m.served(), (Some(req(1, false)), Step::Wait), "buffer full: 3 is held");
        assert_eq!(m.sent(), Step::Serve(req(3, false)));
        assert_eq!(m.tx_used, 1);
    }

    #[test]
    fn skip_serves_good_segments_exactly_as_serve_does() {
        let mut a = Mpp::with(2, InError::Skip);
        let mut b = Mpp::with(2, InError::Serve);
        for r in [req(1, false), req(2, false), req(3, false)] {
            assert_eq!(a.request(r), b.request(r));
        }
        assert_eq!(a.served(), b.served());
        assert_eq!(a.served(), b.served());
        assert_eq!(a.sent(), b.sent());
        assert_eq!(a.tx_used, b.tx_used);
    }
}
