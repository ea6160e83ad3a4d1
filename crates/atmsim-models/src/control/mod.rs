//! Traffic control: pacing, usage parameter control (GCRA), i-out-of-m rate control
//! and the buffer policies (EPD, PPD, EFCI marking). ABR rate control
//! (`abr/`) is here too; credit flow control joins this area.

pub mod abr;
pub mod buffer_policy;
pub mod gcra;
pub mod iofm;
pub mod pacer;
