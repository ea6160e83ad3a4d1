//! What crosses ports: cells as metadata.
//!
//! The hot path carries no 48-octet payloads. A [`Cell`] is 24 bytes: the instant its
//! source emitted it (for delay), the flow it belongs to (for conservation and per-flow
//! statistics, stable end to end), its VC label (which switches may rewrite), a
//! per-flow sequence number and header flags. Byte-exact encodings live in the wire
//! layer and are used by tests and checking modes, not here.

use atmsim_kernel::SimTime;

/// PTI bit 0 of a user cell: end of an AAL5 PDU.
pub const FLAG_EOP: u8 = 0x01;
/// Cell loss priority.
pub const FLAG_CLP: u8 = 0x02;

/// One ATM cell, as metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub born: SimTime,
    pub flow: u32,
    pub vc: u32,
    pub seq: u32,
    pub flags: u8,
}

/// Every message type that crosses a port. A closed enum: later models add variants.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    Cell(Cell),
}
