//! Errors a run can end with.

use crate::time::SimTime;

/// Why a simulation run failed. All variants are fatal to the run, never to the process.
#[derive(Debug, thiserror::Error, Clone, PartialEq)]
pub enum SimError {
    /// A model broke one of its own invariants (a bug in atmsim, not in the input).
    #[error("model invariant broken in {path} at {time}: {msg}")]
    ModelPanic { path: String, time: SimTime, msg: String },
    /// Cells were created or lost without being accounted for.
    #[error("conservation check failed: {0}")]
    Conservation(String),
    /// What the run writes besides its results (a capture file) could not be written.
    #[error("{0}")]
    Output(String),
    /// The caller asked the run to stop (Ctrl-C, a progress callback).
    #[error("run interrupted at {0}")]
    Interrupted(SimTime),
}
