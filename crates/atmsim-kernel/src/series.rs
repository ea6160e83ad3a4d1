//! Time series: quantities sampled at a fixed interval while a run goes on.
//!
//! A scenario asks for series by name; the builder resolves each to a component and an
//! index that the component understands ([`crate::Component::sample`]). The kernel
//! samples at `k·interval` (k = 1, 2, … up to the end of the run): sample `k` is the
//! state after every event at or before `k·interval`. Sampling schedules nothing and
//! enters neither the event count nor the fingerprint, so asking for series never
//! changes a run's trace.
//!
//! Two kinds: a [`SeriesKind::Level`] is the value at the sampling instant (a queue
//! length, a congestion window); a [`SeriesKind::Rate`] samples a running total and
//! reports its increase over the interval ending at the instant, per second (cells
//! transmitted → cells/s). Totals that a component resets at the end of the warm-up
//! are carried across the reset, so a rate series is continuous through it.

use crate::queue::CompId;
use crate::time::{SimDuration, SimTime};

/// How a sampled quantity becomes a series value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeriesKind {
    /// The value at the sampling instant.
    Level,
    /// The increase of a running total over the interval, per second.
    Rate,
}

impl SeriesKind {
    pub fn name(self) -> &'static str {
        match self {
            SeriesKind::Level => "level",
            SeriesKind::Rate => "rate",
        }
    }
}

/// One requested series: whom to ask, what, and how to turn the answer into a value
/// (`scale` multiplies it, e.g. cells → Mb at 424 bits per cell).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SeriesProbe {
    pub comp: CompId,
    pub index: u64,
    pub kind: SeriesKind,
    pub scale: f64,
}

/// The sampled values: `values[i][k]` is probe `i` at `(k + 1)·interval`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SeriesOut {
    pub interval: SimDuration,
    pub values: Vec<Vec<f64>>,
}

/// The sampler the run loop drives.
#[derive(Clone, Debug)]
pub(crate) struct Sampler {
    interval: SimDuration,
    probes: Vec<SeriesProbe>,
    /// The next sampling instant.
    pub(crate) next: SimTime,
    /// Each rate probe's total at the previous instant (adjusted across resets).
    prev: Vec<f64>,
    out: Vec<Vec<f64>>,
}

impl Sampler {
    pub(crate) fn new(interval: SimDuration, probes: Vec<SeriesProbe>, end: SimTime) -> Sampler {
        let n = probes.len();
        let samples = (end.0 / interval.0.max(1)) as usize;
        Sampler {
            interval,
            next: SimTime::ZERO.plus(interval),
            prev: vec![0.0; n],
            out: probes.iter().map(|_| Vec::with_capacity(samples.min(1 << 20))).collect(),
            probes,
        }
    }

    /// Reads every total once, so that rates start from the state after `start()`.
    pub(crate) fn baseline(&mut self, read: &mut dyn FnMut(&SeriesProbe) -> f64) {
        for (p, prev) in self.probes.iter().zip(&mut self.prev) {
            if p.kind == SeriesKind::Rate {
                *prev = read(p);
            }
        }
    }

    /// Takes the sample due at `self.next` and moves to the following instant.
    pub(crate) fn sample(&mut self, read: &mut dyn FnMut(&SeriesProbe) -> f64) {
        let secs = self.interval.as_secs_f64();
        for ((p, prev), out) in self.probes.iter().zip(&mut self.prev).zip(&mut self.out) {
            let v = read(p);
            let value = match p.kind {
                SeriesKind::Level => v * p.scale,
                SeriesKind::Rate => {
                    let d = v - *prev;
                    *prev = v;
                    d / secs * p.scale
                }
            };
            out.push(value);
        }
        self.next = self.next.plus(self.interval);
    }

    /// Around a statistics reset: `before` is each total just before it, `after` just
    /// after; the difference is carried so the next rate counts what came before.
    pub(crate) fn carry_reset(&mut self, before: &[f64], after: &[f64]) {
        for (i, p) in self.probes.iter().enumerate() {
            if p.kind == SeriesKind::Rate {
                self.prev[i] -= before[i] - after[i];
            }
        }
    }

    pub(crate) fn probes(&self) -> &[SeriesProbe] {
        &self.probes
    }

    pub(crate) fn finish(self) -> SeriesOut {
        SeriesOut { interval: self.interval, values: self.out }
    }
}
