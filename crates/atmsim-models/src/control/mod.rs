//! Traffic control: pacing, usage parameter control (GCRA), i-out-of-m rate control
//! and the buffer policies (EPD, PPD, EFCI marking). ABR and credit flow control join
//! this area.

pub mod buffer_policy;
pub mod gcra;
pub mod iofm;
pub mod pacer;
