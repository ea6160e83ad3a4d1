//! Typed data rates, stored exactly as an integer number of millibits per second.
//!
//! Every physical-layer rate of interest (149.76 Mb/s, 40.704 Mb/s, 599.04 Mb/s) is an
//! integer in b/s, so storing mb/s (millibit per second) makes the k-th departure of a
//! periodic emitter exact: `t0 + ceil(k * bits * 1e15 / rate_mbit_per_s)` in integer
//! arithmetic (u128), with no accumulation of rounded slot lengths.

use crate::time::{SimDuration, PS_PER_S};

/// Bits in one ATM cell (53 octets).
pub const CELL_BITS: u64 = 424;

/// A data rate. Zero is not a valid rate; constructors reject it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Rate {
    millibits_per_s: u64,
}

impl Rate {
    /// From bits per second (rounded to the millibit); `None` for zero, negative or
    /// non-finite values.
    pub fn from_bps(bps: f64) -> Option<Rate> {
        if !bps.is_finite() || bps <= 0.0 {
            return None;
        }
        let m = (bps * 1000.0).round();
        if m < 1.0 || m >= u64::MAX as f64 {
            return None;
        }
        Some(Rate { millibits_per_s: m as u64 })
    }
    /// From ATM cells per second (424 bits each).
    pub fn from_cells_per_s(cps: f64) -> Option<Rate> {
        Rate::from_bps(cps * CELL_BITS as f64)
    }
    pub fn bps(self) -> f64 {
        self.millibits_per_s as f64 / 1000.0
    }
    pub fn cells_per_s(self) -> f64 {
        self.bps() / CELL_BITS as f64
    }
    /// Exact time, rounded up to the picosecond, to send `bits` at this rate.
    pub fn time_for_bits(self, bits: u64) -> SimDuration {
        let num = bits as u128 * PS_PER_S as u128 * 1000;
        let d = self.millibits_per_s as u128;
        let q = num.div_ceil(d);
        SimDuration(q.min(u64::MAX as u128) as u64)
    }
    /// Time of the end of the k-th cell (k = 1, 2, …) of a back-to-back train started
    /// at offset 0: `ceil(k * 424 bits / rate)`. Exact for any k.
    pub fn cell_train_offset(self, k: u64) -> SimDuration {
        self.time_for_bits(k.saturating_mul(CELL_BITS))
    }
    /// The first cell slot of a slotted line (slot k starts at
    /// `cell_train_offset(k)` from time zero) that begins strictly after `t`: the first
    /// slot a cell arriving at `t` can use. Exact (integer arithmetic).
    pub fn slot_after(self, t: crate::time::SimTime) -> u64 {
        // ceil(k·B / r) > t  ⟺  k·B / r > t  ⟺  k > t·r / B, with B = 424 bits in
        // picosecond-millibits.
        let b = CELL_BITS as u128 * PS_PER_S as u128 * 1000;
        let k = t.0 as u128 * self.millibits_per_s as u128 / b + 1;
        k.min(u64::MAX as u128) as u64
    }
    /// One cell slot, rounded up to the picosecond (for display and queue bounds only;
    /// emitters use [`Rate::cell_train_offset`]).
    pub fn cell_slot(self) -> SimDuration {
        self.cell_train_offset(1)
    }
    /// Mean cell inter-arrival in picoseconds, as a float (for random emitters).
    pub fn mean_cell_gap_ps(self) -> f64 {
        CELL_BITS as f64 * PS_PER_S as f64 / self.bps()
    }
}

/// Exact end times of a back-to-back cell train without any division per cell.
///
/// Cell k of a train started at `t0` ends at `t0 + ceil(k·424·10^15 / r)` ps, r the rate
/// in millibit/s. The clock keeps `k·B = Q·r + R` (B = 424·10^15) and steps Q and R by
/// the precomputed quotient and remainder of B / r, so each step is two additions and a
/// comparison, and the result equals [`Rate::cell_train_offset`] exactly.
#[derive(Clone, Copy, Debug)]
pub struct CellClock {
    t0: u64,
    q: u64,
    rem: u64,
    step_q: u64,
    step_r: u64,
    r: u64,
}

impl CellClock {
    pub fn new(rate: Rate) -> Self {
        let b = CELL_BITS as u128 * PS_PER_S as u128 * 1000;
        let r = rate.millibits_per_s as u128;
        CellClock { t0: 0, q: 0, rem: 0, step_q: (b / r) as u64, step_r: (b % r) as u64, r: r as u64 }
    }
    /// Starts a new train at `t0` (cell 0 starts then).
    #[inline]
    pub fn restart(&mut self, t0: crate::time::SimTime) {
        self.t0 = t0.0;
        self.q = 0;
        self.rem = 0;
    }
    /// Advances by one cell and returns the instant that cell ends.
    #[inline]
    pub fn advance(&mut self) -> crate::time::SimTime {
        self.q += self.step_q;
        self.rem += self.step_r;
        if self.rem >= self.r {
            self.rem -= self.r;
            self.q += 1;
        }
        crate::time::SimTime(self.t0 + self.q + u64::from(self.rem > 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_clock_equals_the_division_formula() {
        for bps in [149.76e6, 40.704e6, 599.04e6, 100e6, 1234.567, 77.7e6] {
            let r = Rate::from_bps(bps).unwrap();
            let mut c = CellClock::new(r);
            c.restart(crate::time::SimTime(17));
            for k in 1..=20_000u64 {
                assert_eq!(c.advance().0, 17 + r.cell_train_offset(k).0, "rate {bps} k {k}");
            }
        }
    }

    #[test]
    fn slot_after_is_the_first_slot_starting_later() {
        for bps in [149.76e6, 599.04e6, 40.704e6, 1234.5] {
            let r = Rate::from_bps(bps).unwrap();
            let start = |k: u64| r.cell_train_offset(k).0;
            for k in [1u64, 2, 3, 17, 1000, 123_457] {
                // Just before, at and just after the start of slot k.
                let t = start(k);
                assert_eq!(r.slot_after(crate::time::SimTime(t - 1)), k, "{bps} {k}");
                assert_eq!(r.slot_after(crate::time::SimTime(t)), k + 1, "{bps} {k}");
                assert_eq!(r.slot_after(crate::time::SimTime(t + 1)), k + 1, "{bps} {k}");
            }
        }
        let r = Rate::from_bps(149.76e6).unwrap();
        assert_eq!(r.slot_after(crate::time::SimTime::ZERO), 1);
    }

    #[test]
    fn oc3c_cell_slot_is_2831196_58_ps_rounded_up() {
        let r = Rate::from_bps(149.76e6).unwrap();
        assert_eq!(r.cell_slot().ps(), 2_831_197);
        // 100 slots are 283,119,658.1 ps: ceil gives ...659, not 100 * 2,831,197.
        assert_eq!(r.cell_train_offset(100).ps(), 283_119_659);
    }

    #[test]
    fn zero_negative_and_nan_rates_are_rejected() {
        assert!(Rate::from_bps(0.0).is_none());
        assert!(Rate::from_bps(-5.0).is_none());
        assert!(Rate::from_bps(f64::INFINITY).is_none());
        assert!(Rate::from_bps(0.0001).is_none());
    }

    #[test]
    fn cells_per_second_round_trip() {
        let r = Rate::from_cells_per_s(96_000.0).unwrap();
        assert_eq!(r.bps(), 40.704e6);
    }
}
