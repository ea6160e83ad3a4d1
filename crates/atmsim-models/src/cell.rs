//! What crosses ports: cells as metadata.
//!
//! The hot path carries no 48-octet payloads. A [`Cell`] is 32 bytes: the instant its
//! source emitted it (for delay), the flow it belongs to (for conservation and per-flow
//! statistics, stable end to end), its VC label (which switches may rewrite), a
//! per-flow sequence number (for AAL5 traffic: the PDU number), header flags, a per-hop
//! scratch index, for AAL5 the PDU's cell count, and a handle to a payload (a TCP/IP
//! header, RM-cell fields, ...) in the run's store ([`crate::payload`]). Frames (an
//! FDDI or IP frame: a length in octets, sent in octet time) are the other kind of
//! [`Msg`]. Byte-exact encodings live in the wire layer and are used by tests and the
//! checking mode, not here.

use atmsim_kernel::{Ledger, SimTime};

use crate::payload::PayloadId;

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
        Cell { born, flow, vc, seq, payload: PayloadId::NONE, flags: 0, aux: 0, pdu_cells: 0, pdu_index: 0 }
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
    /// What the cell carries beyond its metadata ([`PayloadId::NONE`] for most cells).
    pub payload: PayloadId,
    pub flags: u8,
    /// Per-hop scratch set by the component that queues the cell (a switch puts the
    /// output port's VC-entry index here: per-VC queue and counters); 0 elsewhere.
    pub aux: u16,
    /// For AAL5 traffic, the number of cells of this cell's PDU (what the receiver
    /// learns from the trailer's Length field); 0 for cell-level sources.
    pub pdu_cells: u16,
    /// For AAL5 traffic, the cell's place in its PDU (0 for the first); 0 for
    /// cell-level sources. Models do not act on it (not in the fingerprint's digest):
    /// it names a cell in a trace, with `seq`, the PDU's number.
    pub pdu_index: u16,
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

/// A per-VC entry: the VC label and its `key = value` settings, as written.
pub type VcEntry<'a> = (u32, Vec<(&'a str, &'a str)>);

/// Parses a per-VC entry, `"VC"` or `"VC: key = value, key = value"` (VC as in
/// [`parse_vc_label`]): the one syntax of every kind's per-VC list (`gcra`'s contracts,
/// `iofm`'s windows). Keys must be among `keys` (the error lists them) and appear once;
/// values are returned as written, for the kind to read with their units.
pub fn parse_vc_entry<'a>(text: &'a str, keys: &[&str]) -> Result<VcEntry<'a>, String> {
    let valid = keys.join(", ");
    let (vc, settings) = text.split_once(':').unwrap_or((text, ""));
    if !text.contains(':') && text.contains('=') {
        // the settings without the colon, e.g. iofm's old "2 i=200 m=1000": show the
        // line to write when every word after the VC is one KEY=VALUE
        let mut words = text.split_whitespace();
        let first = words.next().unwrap_or("");
        let rest: Vec<&str> = words.collect();
        let pairs: Option<Vec<String>> = rest
            .iter()
            .map(|w| w.split_once('=').filter(|(k, v)| !k.is_empty() && !v.is_empty()).map(|(k, v)| format!("{k} = {v}")))
            .collect();
        return Err(match pairs {
            Some(p) if !p.is_empty() => format!("'{text}': write the VC, a colon, then the settings separated by commas: \"{first}: {}\"", p.join(", ")),
            _ => format!("'{text}': write the VC, a colon, then key = value settings separated by commas ({valid})"),
        });
    }
    let label = parse_vc_label(vc)?;
    let mut out: Vec<(&str, &str)> = Vec::new();
    for item in settings.split(',').map(str::trim).filter(|x| !x.is_empty()) {
        let (key, value) = item.split_once('=').map(|(k, v)| (k.trim(), v.trim())).ok_or_else(|| format!("'{item}': expected key = value ({valid})"))?;
        if !keys.contains(&key) {
            return Err(format!("'{key}' is not a setting here (valid: {valid})"));
        }
        if value.is_empty() {
            return Err(format!("'{item}': {key} has no value"));
        }
        if out.iter().any(|&(k, _)| k == key) {
            return Err(format!("'{text}': {key} is given twice"));
        }
        out.push((key, value));
    }
    Ok((label, out))
}

/// `vc<VCI>` for VPI 0, else `vc<VPI>.<VCI>`: how probes name a VC.
pub fn vc_name(vc: u32) -> String {
    let (vpi, vci) = (vc >> 16, vc & 0xffff);
    if vpi == 0 { format!("vc{vci}") } else { format!("vc{vpi}.{vci}") }
}

/// A frame: a unit of a frame-based LAN or of IP (an FDDI frame, an IP datagram on a
/// LAN), not a cell. It has a length in octets and is transmitted in octet time; what
/// its header says is its payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Frame {
    /// When its source made it (for delay).
    pub born: SimTime,
    /// The flow it belongs to (conservation, per-flow statistics).
    pub flow: u32,
    /// Its length on the medium in octets, headers and trailers included.
    pub octets: u32,
    /// The address it is sent to (a station, or a connection number such as an ICN).
    pub dst: u32,
    /// Per-flow sequence number.
    pub seq: u32,
    pub payload: PayloadId,
}

/// What a port carries: cells or frames. Wiring an output to an input that carries the
/// other is a load-time error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Carries {
    Cells,
    Frames,
}

impl Carries {
    pub fn name(self) -> &'static str {
        match self {
            Carries::Cells => "cells",
            Carries::Frames => "frames",
        }
    }
}

/// Every message type that crosses a port.
#[derive(Clone, Debug, PartialEq)]
pub enum Msg {
    Cell(Cell),
    Frame(Frame),
}

/// A digest of a message for the run's fingerprint: the cell fields models act on
/// (birth, flow, VC label, sequence number, flags, PDU length) or the frame's, and the
/// payload's contents when it carries one.
#[inline(always)]
pub fn digest(msg: &Msg, store: &crate::payload::Payloads) -> u64 {
    const K: u64 = 0x9e37_79b9_7f4a_7c15;
    let (a, b, c, payload) = match msg {
        Msg::Cell(x) => (x.born.0, ((x.flow as u64) << 32) | x.vc as u64, ((x.seq as u64) << 32) | ((x.flags as u64) << 16) | x.pdu_cells as u64, x.payload),
        Msg::Frame(f) => (f.born.0, ((f.flow as u64) << 32) | f.dst as u64, ((f.seq as u64) << 32) | f.octets as u64, f.payload),
    };
    let h = (a ^ b.rotate_left(23)).wrapping_mul(K) ^ c;
    if payload.is_some() {
        h ^ store.get(payload).map_or(0, crate::payload::digest).rotate_left(7)
    } else {
        h
    }
}

/// Books one cell a component still holds at the end of the run: in flight for its
/// flow, and its payload as held (see [`crate::payload`]).
#[inline]
pub fn book_in_flight(l: &mut Ledger, cell: &Cell) {
    book_held(l, cell.flow, cell.payload);
}

/// Books one unit of `flow` still on its way, holding `payload` (a cell or frame, or
/// what a component keeps of one).
pub fn book_held(l: &mut Ledger, flow: u32, payload: PayloadId) {
    l.add_in_flight(flow, 1);
    l.add_payloads_held(u64::from(payload.is_some()));
}

/// Books a message still on its way (a cell, or a frame: one unit of its flow).
pub fn book(msg: &Msg, l: &mut Ledger) {
    match msg {
        Msg::Cell(c) => book_in_flight(l, c),
        Msg::Frame(f) => book_held(l, f.flow, f.payload),
    }
}
