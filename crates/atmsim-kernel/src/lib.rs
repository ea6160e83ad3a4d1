//! # atmsim-kernel
//!
//! The discrete-event kernel every atmsim model runs on. It knows nothing of ATM:
//!
//! - [`time`]: `SimTime`/`SimDuration`, integer picoseconds;
//! - [`rate`]: `Rate`, exact integer millibits per second, k-th cell times from a counter;
//! - [`queue`]: the future-event list, `(time, seq)` order, FIFO on ties, on the
//!   4-ary [`heap`];
//! - [`sim`]: components with numbered ports, static dispatch, zero-time message
//!   delivery, warm-up deletion, event-trace fingerprint, conservation check;
//! - [`rng`]: per-component random streams from (seed, run, component path, purpose);
//! - [`probe`]: statistics and the long result table;
//! - [`series`]: quantities sampled at a fixed interval during a run;
//! - [`ledger`]: per-flow cell conservation;
//! - [`by_flow`]: a component's per-flow books, one entry per flow it saw;
//! - [`error`]: `SimError`.
//!
//! No Python here: the `atmsim-py` crate is the only one that knows PyO3.

pub mod by_flow;
pub mod error;
pub mod heap;
pub mod ledger;
pub mod probe;
pub mod queue;
pub mod rate;
pub mod rng;
pub mod series;
pub mod sim;
pub mod time;
pub mod units;

pub use by_flow::ByFlow;
pub use error::SimError;
pub use ledger::Ledger;
pub use probe::{Distribution, LevelHistogram, ProbeKind, ProbeRow, ProbeSpec, Quantiles, Report, Tally, TimeAverage, QUANTILE_LEVELS};
pub use queue::{CompId, EventQueue};
pub use rate::{Rate, CELL_BITS};
pub use rng::Stream;
pub use series::{SeriesKind, SeriesOut, SeriesProbe};
pub use sim::{Component, Ctx, Lanes, PortId, Route, RunOutcome, RunStore, Simulation};
pub use time::{SimDuration, SimTime, PS_PER_S};
