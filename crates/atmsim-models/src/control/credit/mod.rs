//! Hop-by-hop (link-by-link) credit flow control, evans96's WAN variant (the AN2/SONET
//! gateway's fourth and fifth FPGAs), as sans-IO state machines:
//!
//! ```text
//!  upstream node                                          downstream node
//!  ┌──────────────────────────────┐   data cells   ┌──────────────────────────────┐
//!  │ linecard: per-VC queues,     │ ─────────────> │ buffer ── cells leave ──>    │
//!  │ sends a VC's cell only while │                │    │ one freed space each    │
//!  │ it holds credit for it       │                │    v                         │
//!  │      ^ one entry per cycle   │  credit cells  │ packer: entries (VCI, 1–16), │
//!  │ entry FIFO <── credit cells  │ <───────────── │ ≤ 24 per cell, ≤ 4 credit VCs│
//!  └──────────────────────────────┘  (any network) └──────────────────────────────┘
//! ```
//!
//! - [`packer`]: the downstream chip ([`CreditPacker`]);
//! - [`linecard`]: the upstream chip's entry FIFO and the linecard's per-VC credit
//!   counts and queues ([`CreditLinecard`]);
//! - the kinds `credit_sender` ([`sender_kind`], the upstream node) and `credit_buffer`
//!   ([`buffer_kind`], the downstream node).
//!
//! Credit cells are standard ATM cells (`atmsim_wire::credit`), so a network that does
//! not implement credit flow control switches them like any VC ("tunnelling"). The
//! in-header variant (the AN2 LAN, DEC FLOWmaster), parameter `carrier = "header"` of
//! both kinds, carries one entry per cell header instead (GFC = credit − 1, VCI = the
//! credited VC, PTI 110: atmsim's layout, `atmsim_wire::credit`); such a header crosses
//! one hop only.

pub mod buffer_kind;
pub mod gate;
pub mod linecard;
pub mod packer;
pub mod sender_kind;

pub use gate::CreditGate;
pub use linecard::CreditLinecard;
pub use packer::CreditPacker;

use crate::params::{ParamSpec, ParamType};

/// How credits travel upstream: `false` = packed in credit cells (WAN), `true` = one per
/// cell header (in-header variant).
pub const CARRIERS: [(&str, bool); 2] = [("cell", false), ("header", true)];

/// The `carrier` parameter both credit kinds share (they must agree on a hop).
pub const CARRIER: [ParamSpec; 1] = [ParamSpec {
    name: "carrier",
    ty: ParamType::Choice(&["cell", "header"]),
    default: Some("cell"),
    required: false,
    help: "how credits travel upstream: \"cell\", up to 24 entries (VCI, 1-16) per standard ATM cell on credit_vc, which any switch carries (evans96's WAN variant); \"header\", one entry per cell header (GFC = credit - 1, VPI 0, VCI = the credited VC, PTI 110), one hop only (the AN2 / DEC FLOWmaster LAN variant); both ends of a hop must agree",
    source: "evans96 (both variants); the header layout is atmsim convention",
}];
