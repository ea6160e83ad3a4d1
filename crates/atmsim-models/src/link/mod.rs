//! Links: the transmitter (a cell buffer, [`buffer`], served at a line rate) used by
//! `fifo`, `link`, switch ports and host interfaces; the physical layers' rates
//! ([`phy`]); an end system's own line ([`line`]); random cell loss; SONET framing of
//! the cell slots ([`sonet`]).

pub mod buffer;
pub mod line;
pub mod loss;
pub mod phy;
pub mod transmitter;
pub mod sonet;
