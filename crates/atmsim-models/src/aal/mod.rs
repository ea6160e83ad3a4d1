//! ATM adaptation layers. [`aal5`]: AAL5 segmentation and reassembly on cell metadata;
//! [`sar`]: the same as parts a composite model holds (a segmenter with its SAR delay
//! and timer, per-VC reassembly with its counters and ledger).

pub mod aal5;
pub mod sar;
