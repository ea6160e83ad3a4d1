//! # atmsim-scenario
//!
//! Scenario files (TOML) to running simulations:
//!
//! - [`load`]: parse with line spans, check every key against the kinds' declarations,
//!   parse values with units, check wiring; one-line errors with file:line, key and what
//!   would be valid ([`ScenarioError`]); `copies = N` tables and `for` list elements
//!   expanded first (`expand`);
//! - [`run`]: build the kernel simulation for (seed, run) and run it, adding per-flow
//!   books from the conservation ledger, the `[probes] keep` filter and the sampled
//!   time series;
//! - [`sweep`]: the `[sweep]` table (grids, ranges, zip, replications, precision
//!   targets), read from the same document with the same errors, and the per-point
//!   seed;
//! - [`trace`]: the `[trace]` table (a cell-by-cell trace of each run);
//! - [`trace_file`]: a cell trace streamed to a CSV file in bounded memory.

pub mod error;
mod expand;
pub mod load;
pub mod run;
pub mod sweep;
pub mod trace;
pub mod trace_file;

pub use error::{Location, ScenarioError};
pub use load::{ComponentDecl, Scenario, SeriesReq, Wire};
pub use run::{FlowBooks, RunResult, SeriesRow, TraceNames, TraceRowOut};
pub use sweep::{point_seed, SweepSpec};
