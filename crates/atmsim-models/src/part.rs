//! Composites built from parts: a model made of several (a host of its application, IP
//! and AAL layers, CPU, TCP connections, adapter pacers, interface and credit gate)
//! delegates to each part alike through [`Part`] — its statistics reset, its probe rows,
//! its cells in the ledger, the time series it samples — instead of naming each part in
//! each method. A composite lists its parts once (the host: `host_parts!`), with the
//! place under its own path where each one's series are found.

use atmsim_kernel::probe::Report;
use atmsim_kernel::{Ledger, SimTime};

use crate::series::SeriesDecl;

/// When and where a part reports: the instant, the seconds since the warm-up reset,
/// and the composite's path.
#[derive(Clone, Copy, Debug)]
pub struct At<'a> {
    pub now: SimTime,
    pub secs: f64,
    pub path: &'a str,
}

/// What a composite delegates to each of its parts. Every method has a default that
/// does nothing, for parts that have none of it.
pub trait Part {
    /// Warm-up deletion: forget statistics gathered before `now`.
    fn reset_stats(&mut self, now: SimTime) {
        let _ = now;
    }
    /// Write the part's probe rows.
    fn report(&self, at: &At<'_>, out: &mut Report) {
        let _ = (at, out);
    }
    /// Add the cells (and payloads) the part holds, drops and delivers to the ledger.
    fn ledger(&self, ledger: &mut Ledger) {
        let _ = ledger;
    }
    /// The time series the part samples, at its place in the composite.
    fn series(&self) -> &'static [SeriesDecl] {
        &[]
    }
    /// The current value of series `q` (an index into [`Part::series`]).
    fn sample(&self, q: usize) -> f64 {
        let _ = q;
        f64::NAN
    }
}
