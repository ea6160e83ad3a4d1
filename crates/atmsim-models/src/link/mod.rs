//! Links: the transmitter (a cell buffer served at a line rate, with the physical-layer
//! presets) used by `fifo`, `link`, switch ports and host interfaces, and random cell
//! loss; SONET framing of the cell slots (`sonet`).

pub mod line;
pub mod loss;
pub mod transmitter;
pub mod sonet;
