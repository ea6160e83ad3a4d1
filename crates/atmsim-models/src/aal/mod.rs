//! ATM adaptation layers. [`aal5`]: AAL5 segmentation and reassembly on cell metadata.

pub mod aal5;
