//! Probes: the statistics models keep, and the long table they report into.
//!
//! Models declare their probes once, in a `&'static [ProbeSpec]` (name, unit, kind,
//! help), which `atmsim describe` prints. At the end of a run each component writes rows
//! `(component, probe, statistic, value, unit)` into a [`Report`]. Warm-up deletion is a
//! call to `reset(now)` on every statistic at the warm-up instant: counters restart,
//! time-weighted means restart their integration window and keep the current level.

use crate::time::SimTime;

/// What kind of statistic a probe is; decides which `statistic` rows it reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeKind {
    /// A count of events over the measurement window (`count`, and often `rate`).
    Counter,
    /// A level integrated over time (`mean`, `max`).
    TimeAverage,
    /// Per-sample statistics (`count`, `mean`, `std`, `min`, `max`).
    Tally,
    /// A distribution (`p_gt_<x>` or bucket rows).
    Histogram,
    /// A single derived value (`value`).
    Gauge,
}

impl ProbeKind {
    pub fn name(self) -> &'static str {
        match self {
            ProbeKind::Counter => "counter",
            ProbeKind::TimeAverage => "time_average",
            ProbeKind::Tally => "tally",
            ProbeKind::Histogram => "histogram",
            ProbeKind::Gauge => "gauge",
        }
    }
}

/// A probe declaration.
#[derive(Clone, Copy, Debug)]
pub struct ProbeSpec {
    pub name: &'static str,
    pub unit: &'static str,
    pub kind: ProbeKind,
    pub help: &'static str,
}

/// One row of the result table.
#[derive(Clone, Debug, PartialEq)]
pub struct ProbeRow {
    pub component: String,
    pub probe: &'static str,
    pub statistic: String,
    pub value: f64,
    pub unit: &'static str,
}

/// Collects rows at the end of a run.
#[derive(Clone, Default, Debug)]
pub struct Report {
    pub rows: Vec<ProbeRow>,
}

impl Report {
    pub fn push(&mut self, component: &str, probe: &'static str, statistic: &str, value: f64, unit: &'static str) {
        self.rows.push(ProbeRow {
            component: component.to_string(),
            probe,
            statistic: statistic.to_string(),
            value,
            unit,
        });
    }
}

/// A level integrated over time: mean and maximum of a piecewise-constant signal.
#[derive(Clone, Debug, Default)]
pub struct TimeAverage {
    start: SimTime,
    last: SimTime,
    level: f64,
    area: f64, // level × picoseconds
    max: f64,
}

impl TimeAverage {
    pub fn new(now: SimTime, level: f64) -> Self {
        TimeAverage { start: now, last: now, level, area: 0.0, max: level }
    }
    #[inline(always)]
    pub fn set(&mut self, now: SimTime, level: f64) {
        self.area += self.level * (now.0 - self.last.0) as f64;
        self.last = now;
        self.level = level;
        if level > self.max {
            self.max = level;
        }
    }
    pub fn reset(&mut self, now: SimTime) {
        *self = TimeAverage::new(now, self.level);
    }
    pub fn mean(&self, now: SimTime) -> f64 {
        let span = now.0.saturating_sub(self.start.0) as f64;
        if span <= 0.0 {
            return self.level;
        }
        (self.area + self.level * (now.0 - self.last.0) as f64) / span
    }
    pub fn max(&self) -> f64 {
        self.max
    }
    pub fn level(&self) -> f64 {
        self.level
    }
}

/// Per-sample statistics: count, mean, standard deviation, min, max.
///
/// Sums are kept about the first sample (shifted data), which keeps the variance
/// accurate without Welford's division per sample — this sits on every cell's path.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    n: u64,
    shift: f64,
    sum: f64,
    sum2: f64,
    min: f64,
    max: f64,
}

impl Tally {
    #[inline(always)]
    pub fn add(&mut self, x: f64) {
        if self.n == 0 {
            self.shift = x;
            self.min = x;
            self.max = x;
        }
        self.n += 1;
        // Plain comparisons (samples are never NaN): cheaper than f64::min/max.
        if x < self.min {
            self.min = x;
        }
        if x > self.max {
            self.max = x;
        }
        let d = x - self.shift;
        self.sum += d;
        self.sum2 += d * d;
    }
    pub fn reset(&mut self) {
        *self = Tally::default();
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.shift + self.sum / self.n as f64 }
    }
    pub fn std(&self) -> f64 {
        if self.n < 2 {
            return f64::NAN;
        }
        let n = self.n as f64;
        ((self.sum2 - self.sum * self.sum / n).max(0.0) / (n - 1.0)).sqrt()
    }
    pub fn min(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.min }
    }
    pub fn max(&self) -> f64 {
        if self.n == 0 { f64::NAN } else { self.max }
    }
    /// Writes count, mean, std, min, max, each scaled by `scale` (count excepted).
    pub fn report(&self, out: &mut Report, component: &str, probe: &'static str, unit: &'static str, scale: f64) {
        out.push(component, probe, "count", self.count() as f64, "1");
        out.push(component, probe, "mean", self.mean() * scale, unit);
        out.push(component, probe, "std", self.std() * scale, unit);
        out.push(component, probe, "min", self.min() * scale, unit);
        out.push(component, probe, "max", self.max() * scale, unit);
    }
}

/// Per-sample distribution of a non-negative integer quantity (a delay in picoseconds,
/// say), from which quantiles follow to a bounded relative error: an HDR histogram
/// (the `hdrhistogram` crate, Gil Tene's log-linear buckets) that keeps `digits`
/// significant decimal digits and grows with the largest sample seen. Its buckets start
/// at 1: memory is about 8 KB per doubling of the largest sample at 3 digits (1 KB at
/// 2), so models keep one only when asked to.
#[derive(Clone, Debug)]
pub struct Quantiles {
    h: hdrhistogram::Histogram<u64>,
}

/// The levels every `Quantiles` probe reports, with the statistic names they carry
/// (`p99_9` is the 0.999 quantile: a dot would split the statistic in a
/// `COMPONENT.PROBE.STATISTIC` path).
pub const QUANTILE_LEVELS: [(&str, f64); 6] =
    [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p99_9", 0.999), ("p99_99", 0.9999), ("p99_999", 0.99999)];

impl Quantiles {
    /// Significant decimal digits a histogram can keep (the crate's limits).
    pub const DIGITS: std::ops::RangeInclusive<u8> = 1..=5;

    /// A histogram keeping `digits` significant decimal digits; `None` when `digits`
    /// is outside [`Quantiles::DIGITS`].
    pub fn new(digits: u8) -> Option<Self> {
        if !Self::DIGITS.contains(&digits) {
            return None;
        }
        let mut h = hdrhistogram::Histogram::new_with_bounds(1, 2, digits).ok()?;
        h.auto(true);
        Some(Quantiles { h })
    }

    /// Records one sample, growing the histogram to hold it (the crate's saturating
    /// record would clamp instead of growing; it serves only values beyond what any
    /// histogram can track).
    #[inline]
    pub fn add(&mut self, x: u64) {
        if self.h.record(x).is_err() {
            self.h.saturating_record(x);
        }
    }

    pub fn reset(&mut self) {
        self.h.reset();
    }

    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// The `q` quantile: the smallest recorded value with at least a fraction `q` of the
    /// samples at or below it, given as the middle of its histogram bucket (so within
    /// half a bucket, at most 10^-digits relative, of the exact sample quantile);
    /// `None` without samples.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.h.is_empty() {
            return None;
        }
        Some(self.h.median_equivalent(self.h.value_at_quantile(q)))
    }

    /// The quantiles `p50` … `p99_999` ([`QUANTILE_LEVELS`]) with their statistic
    /// names, each scaled by `scale` and kept within `[lo, hi]` (the exact minimum and
    /// maximum, which a bucket's middle could otherwise pass); none without samples.
    pub fn levels(&self, scale: f64, lo: f64, hi: f64) -> impl Iterator<Item = (&'static str, f64)> + '_ {
        QUANTILE_LEVELS.into_iter().filter_map(move |(name, q)| Some((name, (self.quantile(q)? as f64 * scale).clamp(lo, hi))))
    }

    /// Rows `p50` … `p99_999` of `probe` for `component`: [`Quantiles::levels`] with the
    /// exact extremes of `tally` (the same samples) as its bounds, scaled by `scale`.
    pub fn report(&self, tally: &Tally, out: &mut Report, component: &str, probe: &'static str, unit: &'static str, scale: f64) {
        for (stat, v) in self.levels(scale, tally.min() * scale, tally.max() * scale) {
            out.push(component, probe, stat, v, unit);
        }
    }
}

/// A per-sample statistic kept as a [`Tally`] (count, mean, std, min, max) and, when
/// asked for, as [`Quantiles`] too: what a model measuring one kind of delay holds.
#[derive(Clone, Debug, Default)]
pub struct Distribution {
    tally: Tally,
    quantiles: Option<Box<Quantiles>>,
}

impl Distribution {
    /// A tally, with quantiles of `digits` significant digits when `digits` is given
    /// (and within [`Quantiles::DIGITS`]).
    pub fn new(digits: Option<u8>) -> Self {
        Distribution { tally: Tally::default(), quantiles: digits.and_then(Quantiles::new).map(Box::new) }
    }

    #[inline]
    pub fn add(&mut self, x: u64) {
        self.tally.add(x as f64);
        if let Some(q) = &mut self.quantiles {
            q.add(x);
        }
    }

    pub fn reset(&mut self) {
        self.tally.reset();
        if let Some(q) = &mut self.quantiles {
            q.reset();
        }
    }

    pub fn tally(&self) -> &Tally {
        &self.tally
    }

    /// Rows `count`, `mean`, `std`, `min`, `max` and, with quantiles, `p50` … `p99_999`,
    /// each value scaled by `scale`.
    pub fn report(&self, out: &mut Report, component: &str, probe: &'static str, unit: &'static str, scale: f64) {
        self.tally.report(out, component, probe, unit, scale);
        if let Some(q) = &self.quantiles {
            q.report(&self.tally, out, component, probe, unit, scale);
        }
    }
}

/// Time-weighted distribution of a non-negative integer level (such as a queue length):
/// the time spent at each level, from which the mean, the maximum and tail fractions
/// follow exactly. The table grows with the highest level seen, up to `max_levels`;
/// time above that is pooled in the last bucket for tails but still counted at its
/// exact level for the mean.
#[derive(Clone, Debug)]
pub struct LevelHistogram {
    start: SimTime,
    last: SimTime,
    level: usize,
    max: usize,
    max_levels: usize,
    time_at: Vec<u64>,
    area_pooled: f64,
}

impl LevelHistogram {
    pub fn new(now: SimTime, max_levels: usize) -> Self {
        LevelHistogram { start: now, last: now, level: 0, max: 0, max_levels: max_levels.max(1), time_at: vec![0; 1], area_pooled: 0.0 }
    }
    #[inline(always)]
    pub fn set(&mut self, now: SimTime, level: usize) {
        let dt = now.0 - self.last.0;
        let b = self.level;
        if b < self.time_at.len() {
            self.time_at[b] += dt;
        } else {
            self.grow_and_add(b, dt);
        }
        self.last = now;
        self.level = level;
        if level > self.max {
            self.max = level;
        }
    }
    #[cold]
    fn grow_and_add(&mut self, b: usize, dt: u64) {
        if b < self.max_levels {
            self.time_at.resize(b + 1, 0);
            self.time_at[b] += dt;
        } else {
            let top = self.max_levels - 1;
            if self.time_at.len() < self.max_levels {
                self.time_at.resize(self.max_levels, 0);
            }
            self.time_at[top] += dt;
            self.area_pooled += (b - top) as f64 * dt as f64;
        }
    }
    pub fn reset(&mut self, now: SimTime) {
        self.time_at.iter_mut().for_each(|t| *t = 0);
        self.start = now;
        self.last = now;
        self.max = self.level;
        self.area_pooled = 0.0;
    }
    fn closed(&self, now: SimTime) -> (Vec<u64>, f64) {
        let mut t = self.time_at.clone();
        let b = self.level.min(self.max_levels - 1);
        if t.len() <= b {
            t.resize(b + 1, 0);
        }
        let dt = now.0 - self.last.0;
        t[b] += dt;
        let extra = if self.level > b { (self.level - b) as f64 * dt as f64 } else { 0.0 };
        (t, self.area_pooled + extra)
    }
    /// Fraction of time with level strictly greater than `x`.
    pub fn p_greater(&self, now: SimTime, x: usize) -> f64 {
        let span = now.0.saturating_sub(self.start.0);
        if span == 0 {
            return f64::NAN;
        }
        let (t, _) = self.closed(now);
        let above: u64 = t.iter().skip(x + 1).sum();
        above as f64 / span as f64
    }
    /// Time-weighted mean level.
    pub fn mean(&self, now: SimTime) -> f64 {
        let span = now.0.saturating_sub(self.start.0);
        if span == 0 {
            return f64::NAN;
        }
        let (t, pooled) = self.closed(now);
        let area: f64 = t.iter().enumerate().map(|(l, &x)| l as f64 * x as f64).sum::<f64>() + pooled;
        area / span as f64
    }
    /// Highest level since the last reset.
    pub fn max(&self) -> usize {
        self.max
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_average_integrates_piecewise_levels() {
        let mut a = TimeAverage::new(SimTime(0), 0.0);
        a.set(SimTime(10), 2.0);
        a.set(SimTime(30), 1.0);
        // 0 for 10, 2 for 20, 1 for 10 → 50 / 40
        assert_eq!(a.mean(SimTime(40)), 1.25);
        assert_eq!(a.max(), 2.0);
        a.reset(SimTime(40));
        assert_eq!(a.mean(SimTime(50)), 1.0);
    }

    #[test]
    fn tally_matches_two_pass_statistics() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let mut t = Tally::default();
        xs.iter().for_each(|&x| t.add(x));
        assert_eq!(t.mean(), 5.0);
        let var: f64 = xs.iter().map(|x| (x - 5.0) * (x - 5.0)).sum::<f64>() / 7.0;
        assert!((t.std() - var.sqrt()).abs() < 1e-12);
        assert_eq!((t.min(), t.max()), (2.0, 9.0));
    }

    /// The exact sample quantile of the sorted samples: the smallest x_(k) with k ≥ q·n.
    fn exact(sorted: &[u64], q: f64) -> u64 {
        let k = ((q * sorted.len() as f64).ceil() as usize).max(1);
        sorted[k - 1]
    }

    #[test]
    fn quantiles_match_the_sorted_samples_to_their_resolution() {
        // Delays spread over six orders of magnitude (1 ns to 1 ms in picoseconds).
        let mut xs: Vec<u64> = (0..20_000u64).map(|i| 1_000 + (i * i * 2_500) % 1_000_000_000).collect();
        for digits in [2u8, 3, 4] {
            let mut h = Quantiles::new(digits).unwrap();
            xs.iter().for_each(|&x| h.add(x));
            xs.sort_unstable();
            assert_eq!(h.count(), xs.len() as u64);
            for (_, q) in QUANTILE_LEVELS {
                let want = exact(&xs, q) as f64;
                let got = h.quantile(q).unwrap() as f64;
                assert!((got - want).abs() <= want * 10f64.powi(-i32::from(digits)), "digits {digits} q {q}: {got} vs {want}");
            }
        }
    }

    #[test]
    fn quantiles_reset_and_report_within_the_exact_extremes() {
        let mut h = Quantiles::new(2).unwrap();
        assert_eq!(h.quantile(0.5), None);
        (0..100).for_each(|_| h.add(2_830_189));
        let levels: Vec<_> = h.levels(1e-12, 2_830_189e-12, 2_830_189e-12).collect();
        assert_eq!(levels.len(), QUANTILE_LEVELS.len());
        // A constant delay is reported exactly, not as its bucket's middle.
        assert!(levels.iter().all(|&(_, v)| v == 2_830_189e-12));
        h.reset();
        assert_eq!((h.count(), h.quantile(0.99)), (0, None));
        assert!(Quantiles::new(0).is_none() && Quantiles::new(6).is_none());
    }

    #[test]
    fn level_histogram_tail() {
        let mut h = LevelHistogram::new(SimTime(0), 5);
        h.set(SimTime(10), 3); // level 0 for 10
        h.set(SimTime(20), 9); // level 3 for 10, then 9 (pooled in bucket 4)
        assert_eq!(h.p_greater(SimTime(40), 2), 30.0 / 40.0);
        assert_eq!(h.p_greater(SimTime(40), 3), 20.0 / 40.0);
        assert_eq!(h.p_greater(SimTime(40), 4), 0.0);
        // mean counts the pooled time at its real level: (3·10 + 9·20) / 40
        assert_eq!(h.mean(SimTime(40)), 210.0 / 40.0);
        assert_eq!(h.max(), 9);
    }
}
