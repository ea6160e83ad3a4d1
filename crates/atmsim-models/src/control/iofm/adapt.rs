//! The adaptive i-out-of-m shaper of evans96 (section "Development, Design, and
//! Implementation of Real-Time Traffic Control", Fig. 16).
//!
//! At the end of each measurement interval, from the VC's cell count and burst count
//! in that interval (the pacing-measurement hardware's, see the controller):
//!
//! - measured rate λ = cells / interval slots (normalised to the line), rate
//!   utilisation r = λ / (i/m), average burst β = cells / bursts;
//! - burst adaptation first: if i < 1.1 β, `i = i + i·μ+`; if i > 1.3 β,
//!   `i = i − i·μ−`; otherwise i is kept;
//! - then rate adaptation on the inverse rate m/i: if r > r_targ (0.85 in evans96),
//!   `m/i = m/i − (m/i)·γ−` (a higher rate), else `m/i = m/i + (m/i)·γ+`; the new m is
//!   `(m/i)·i`.
//!
//! What evans96 leaves open, and atmsim's choice (documented in docs/models/iofm.md):
//! μ±, γ± are not given, so they are required parameters; i and m/i are adapted as real
//! numbers (as the gateway's control processor would compute them) and the hardware gets
//! `i = round(i)` within 1..511 and `m = round((m/i)·i)` within i..1023; with no burst in
//! the interval (no cell), i is kept.

use super::{I_MAX, M_MAX};

/// (i, m) of a paced VC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    pub i: u32,
    pub m: u64,
}

/// The adaptation's settings.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Adapt {
    /// Measurement interval, in cell slots of the line.
    pub interval: u64,
    pub mu_plus: f64,
    pub mu_minus: f64,
    pub gamma_plus: f64,
    pub gamma_minus: f64,
    /// Target rate utilisation r_targ.
    pub target: f64,
}

/// What the algorithm adapts, as real numbers: the burst allowance i and the inverse
/// rate m/i.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdaptState {
    pub i: f64,
    pub m_over_i: f64,
}

impl AdaptState {
    pub fn from_window(w: Window) -> Self {
        AdaptState { i: w.i as f64, m_over_i: w.m as f64 / w.i as f64 }
    }
}

/// One step at the end of an interval in which the VC sent `cells` cells in `bursts`
/// bursts under window `w`: the new state, and the window the hardware gets.
pub fn adapt_window(s: AdaptState, w: Window, cells: u64, bursts: u64, a: &Adapt) -> (AdaptState, Window) {
    let lambda = cells as f64 / a.interval as f64;
    let r = lambda * w.m as f64 / w.i as f64;
    let mut i = s.i;
    if bursts > 0 {
        let beta = cells as f64 / bursts as f64;
        if i < 1.1 * beta {
            i += i * a.mu_plus;
        } else if i > 1.3 * beta {
            i -= i * a.mu_minus;
        }
    }
    let mut q = s.m_over_i;
    if r > a.target {
        q -= q * a.gamma_minus;
    } else {
        q += q * a.gamma_plus;
    }
    let i = i.clamp(1.0, I_MAX as f64);
    let q = q.clamp(1.0, M_MAX as f64);
    let wi = (i.round() as u32).clamp(1, I_MAX as u32);
    let wm = ((q * wi as f64).round() as u64).clamp(wi as u64, M_MAX as u64);
    (AdaptState { i, m_over_i: q }, Window { i: wi, m: wm })
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Adapt = Adapt { interval: 1000, mu_plus: 0.5, mu_minus: 0.25, gamma_plus: 0.2, gamma_minus: 0.1, target: 0.85 };

    fn step(i: u32, m: u64, cells: u64, bursts: u64) -> Window {
        let w = Window { i, m };
        adapt_window(AdaptState::from_window(w), w, cells, bursts, &A).1
    }

    #[test]
    fn bursts_larger_than_i_raise_i_and_a_busy_vc_raises_its_rate() {
        // i = 10 of m = 100 (0.1); 95 cells in 1000 slots: r = 0.95 > 0.85 → rate up;
        // β = 95 / 5 = 19 > i / 1.1 → i up by half: 15. m/i = 10 → 9: m = 135.
        assert_eq!(step(10, 100, 95, 5), Window { i: 15, m: 135 });
    }

    #[test]
    fn small_bursts_lower_i_and_an_underused_window_lowers_the_rate() {
        // β = 60 / 20 = 3, i = 10 > 1.3 β → i down by a quarter: 7.5 → 8 (rounded);
        // r = 0.06 / 0.1 = 0.6 ≤ 0.85 → m/i = 10 → 12: m = 12 × 8 = 96.
        assert_eq!(step(10, 100, 60, 20), Window { i: 8, m: 96 });
    }

    #[test]
    fn between_the_hysteresis_bounds_i_stays() {
        // β = 80 / 10 = 8: 1.1 β = 8.8 ≤ i = 10 ≤ 1.3 β = 10.4; r = 0.8 → rate down.
        assert_eq!(step(10, 100, 80, 10), Window { i: 10, m: 120 });
        // An idle interval: i kept, rate down.
        assert_eq!(step(10, 100, 0, 0), Window { i: 10, m: 120 });
    }

    #[test]
    fn the_hardware_fields_bound_the_window() {
        // i at most 511: 500 → 750 → 511, with m/i 2 → 1.8: m = 920.
        let w = Window { i: 500, m: 1000 };
        let (s, out) = adapt_window(AdaptState::from_window(w), w, 1000, 1, &A);
        assert_eq!(out, Window { i: 511, m: 920 });
        assert_eq!(s.i, 511.0);
        // m at most 1023: an idle interval takes m/i 2 → 2.4, m 1200 → 1023.
        let (_, out) = adapt_window(AdaptState::from_window(w), w, 0, 0, &A);
        assert_eq!(out, Window { i: 500, m: 1023 });
        // m/i at least 1 (the whole line): i 4 → 3, m/i 1 → 0.9 → 1.
        let w = Window { i: 4, m: 4 };
        let (_, out) = adapt_window(AdaptState::from_window(w), w, 1000, 1000, &A);
        assert_eq!(out, Window { i: 3, m: 3 });
    }

    #[test]
    fn real_valued_state_lets_small_steps_add_up() {
        // i = 1 grows by 10% a step: rounded it stays 1 for four steps, then becomes 2.
        let a = Adapt { mu_plus: 0.1, ..A };
        let mut w = Window { i: 1, m: 10 };
        let mut s = AdaptState::from_window(w);
        let mut seen = Vec::new();
        for _ in 0..6 {
            (s, w) = adapt_window(s, w, 900, 1, &a);
            seen.push(w.i);
        }
        assert_eq!(seen, vec![1, 1, 1, 1, 2, 2]);
    }
}
