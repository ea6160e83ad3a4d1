//! FDDI (ANSI X3.139-1987, Fiber Distributed Data Interface, token ring MAC).
//!
//! - [`mac`]: the timed-token MAC of one station as a sans-IO state machine (TTRT,
//!   token rotation timer, token holding timer, late count, synchronous allocation,
//!   asynchronous priority thresholds) and the frame timing of the 100 Mb/s ring.
//! - [`ring`]: the `fddi_ring` kind: a whole ring (stations, their traffic generators
//!   and connection tables, ring latency, token passing) as one component, with an
//!   optional gateway station whose frames enter and leave through frame ports.

pub mod mac;
pub mod ring;
