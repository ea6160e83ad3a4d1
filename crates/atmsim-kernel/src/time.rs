//! Simulation time: integer picoseconds.
//!
//! `SimTime` is an instant, `SimDuration` a span; both are `u64` picoseconds, giving
//! about 213 days of range. No floating point ever enters the event queue: seconds are
//! produced only for output. An OC-3c cell slot (424 bit / 149.76 Mb/s) is
//! 2,831,196.58 ps, so rounding one slot to a picosecond errs by < 2e-7 relative, and
//! periodic emitters never accumulate that error because they compute the k-th instant
//! from a counter (see [`crate::rate::Rate::time_for_bits`]).

use std::fmt;

/// Picoseconds per second.
pub const PS_PER_S: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub fn ps(self) -> u64 {
        self.0
    }
    /// Seconds (a multiplication by 1e-12: within one ulp of the exact quotient).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
    /// Saturating: the far future stays the far future.
    pub fn plus(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    pub const ZERO: SimDuration = SimDuration(0);

    pub fn from_ps(ps: u64) -> Self {
        SimDuration(ps)
    }
    /// Rounds to the nearest picosecond; negative or non-finite inputs give `None`.
    pub fn from_secs_f64(s: f64) -> Option<Self> {
        if !s.is_finite() || s < 0.0 {
            return None;
        }
        let ps = (s * PS_PER_S as f64).round();
        if ps >= u64::MAX as f64 {
            return None;
        }
        Some(SimDuration(ps as u64))
    }
    pub fn ps(self) -> u64 {
        self.0
    }
    /// Seconds (a multiplication by 1e-12: within one ulp of the exact quotient).
    #[inline]
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-12
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.as_secs_f64())
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9} s", self.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_round_trip_to_the_picosecond() {
        let d = SimDuration::from_secs_f64(8.8e-3).unwrap();
        assert_eq!(d.ps(), 8_800_000_000);
        assert_eq!(SimDuration::from_secs_f64(-1.0), None);
        assert_eq!(SimDuration::from_secs_f64(f64::NAN), None);
    }

    #[test]
    fn plus_saturates() {
        assert_eq!(SimTime::MAX.plus(SimDuration(5)), SimTime::MAX);
        assert_eq!(SimTime(3).since(SimTime(5)), SimDuration::ZERO);
    }
}
