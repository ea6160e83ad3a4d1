//! Traffic control: pacing, usage parameter control (GCRA), i-out-of-m rate control
//! and the buffer policies (EPD, PPD, EFCI marking). ABR rate control
//! (`abr/`) is here too and hop-by-hop credit
//! flow control (`credit/`).

pub mod abr;
pub mod buffer_policy;
pub mod credit;
pub mod gcra;
pub mod iofm;
pub mod measure;
pub mod pacer;
