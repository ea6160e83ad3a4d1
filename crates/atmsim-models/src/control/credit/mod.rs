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
//! not implement credit flow control switches them like any VC ("tunnelling").

pub mod buffer_kind;
pub mod linecard;
pub mod packer;
pub mod sender_kind;

pub use linecard::CreditLinecard;
pub use packer::CreditPacker;
