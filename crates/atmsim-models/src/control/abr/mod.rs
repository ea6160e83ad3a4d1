//! ABR rate-based flow control (ATM Forum Traffic Management 4.0, af-tm-0056.000,
//! section 5.10): the end systems and the switch algorithms as sans-IO state
//! machines, each taking `now` and its inputs and returning what to do, driven event by
//! event in their unit tests. docs/models/abr.md explains the rules, the parameter sets
//! and the readings chosen.
//!
//! - [`params`]: the end-system parameters and the named sets `tm40` and `eprca95`
//!   (dastangoo96 Table 1 mapped to TM 4.0);
//! - [`source`]: source rules 1–13; [`dest`]: destination turn-around, CI from EFCI,
//!   optional BECN;
//! - switch algorithms: EFCI marking is the buffer policy's (`efci_threshold`,
//!   [`crate::control::buffer_policy`]); [`eprca`]: EPRCA explicit rate with
//!   intelligent marking; [`erica`]: ERICA with optional ERICA+ queue control.
//!
//! And as components a scenario wires: [`source_kind`] (`abr_source`), [`dest_kind`]
//! (`abr_dest`) and [`mux`] (`abr_mux`: a fifo with a switch algorithm).

pub mod dest;
pub mod dest_kind;
pub mod eprca;
pub mod erica;
pub mod mux;
pub mod params;
pub mod port;
pub mod source;
pub mod source_kind;

#[cfg(test)]
mod loop_tests;
