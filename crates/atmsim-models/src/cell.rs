//! What crosses ports: cells as metadata.
//!
//! The hot path carries no 48-octet payloads. A [`Cell`] is 32 bytes: the instant its
//! source emitted it (for delay), the flow it belongs to (for conservation and per-flow
//! statistics, stable end to end), its VC label (which switches may rewrite), a
//! per-flow sequence number (for AAL5 traffic: the PDU number), header flags, a per-hop
//! scratch index, for AAL5 the PDU's cell count, and for TCP segments the few header
//! fields a receiver acts on. Byte-exact encodings live in the wire
//! layer and are used by tests and checking modes, not here.

use atmsim_kernel::SimTime;

/// PTI bit 0 of a user cell: end of an AAL5 PDU.
pub const FLAG_EOP: u8 = 0x01;
/// Cell loss priority.
pub const FLAG_CLP: u8 = 0x02;
/// PTI bit 1 of a user cell: explicit forward congestion indication, set by a
/// congested buffer (see [`crate::control::buffer_policy`]). (0x04 is the hosts' IP
/// last-fragment mark.)
pub const FLAG_EFCI: u8 = 0x08;

impl Cell {
    /// A cell-level source's cell (no AAL).
    pub fn plain(born: SimTime, flow: u32, vc: u32, seq: u32) -> Cell {
        Cell { born, flow, vc, seq, tcp_word: 0, flags: 0, tcp_flags: 0, aux: 0, pdu_cells: 0, tcp_half: 0 }
    }
    pub fn is_eop(&self) -> bool {
        self.flags & FLAG_EOP != 0
    }
}

/// One ATM cell, as metadata.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    pub born: SimTime,
    pub flow: u32,
    /// VC label: `(VPI << 16) | VCI`.
    pub vc: u32,
    pub seq: u32,
    /// TCP segments (see `host::tcp::Segment::to_wire`): the sequence number of a data
    /// segment or the acknowledgement number of an ACK; 0 for other traffic. The TCP
    /// header fields live in what would otherwise be padding, so a cell stays 32 bytes.
    pub tcp_word: u32,
    pub flags: u8,
    /// TCP segment flags (`host::tcp::F_*`); 0 for other traffic.
    pub tcp_flags: u8,
    /// Per-hop scratch set by the component that queues the cell (a switch puts the
    /// output port's VC-entry index here: per-VC queue and counters); 0 elsewhere.
    pub aux: u16,
    /// For AAL5 traffic, the number of cells of this cell's PDU (what the receiver
    /// learns from the trailer's Length field); 0 for cell-level sources.
    pub pdu_cells: u16,
    /// TCP: a data segment's length or an ACK's window (in units of 2^`WIN_SHIFT` octets).
    pub tcp_half: u16,
}

const _: () = assert!(std::mem::size_of::<Cell>() == 32, "a cell's metadata stays 32 bytes");

/// The VC label of `(vpi, vci)`.
pub const fn vc_label(vpi: u16, vci: u16) -> u32 {
    ((vpi as u32) << 16) | vci as u32
}

/// Parses `VPI/VCI` or `VCI` (VPI 0) into a VC label.
pub fn parse_vc_label(text: &str) -> Result<u32, String> {
    let v = text.trim();
    let (vpi, vci) = match v.split_once('/') {
        Some((a, b)) => (a.trim().parse::<u16>().map_err(|_| format!("VPI '{a}' is not 0..4095"))?, b.trim().parse::<u16>().map_err(|_| format!("VCI '{b}' is not 0..65535"))?),
        None => (0, v.parse::<u16>().map_err(|_| format!("VCI '{v}' is not 0..65535"))?),
    };
    if vpi > 4095 {
        return Err(format!("VPI {vpi} is not 0..4095"));
    }
    Ok(vc_label(vpi, vci))
}

/// `vc<VCI>` for VPI 0, else `vc<VPI>.<VCI>`: how probes name a VC.
pub fn vc_name(vc: u32) -> String {
    let (vpi, vci) = (vc >> 16, vc & 0xffff);
    if vpi == 0 { format!("vc{vci}") } else { format!("vc{vpi}.{vci}") }
}

/// Every message type that crosses a port. A closed enum: later models add variants.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    Cell(Cell),
}
