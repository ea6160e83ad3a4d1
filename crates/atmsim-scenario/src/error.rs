//! Scenario errors: one line each, naming file, line, key, what is wrong and what
//! would be valid.

use std::fmt;

/// Where an error is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// The file, or `--set` for command-line overrides.
    pub file: String,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// Dotted key path (`components.src.rate`), or empty.
    pub key: String,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(l) = self.line {
            write!(f, ":{l}")?;
        }
        if !self.key.is_empty() {
            write!(f, ": {}", self.key)?;
        }
        Ok(())
    }
}

/// Why a scenario was rejected. Every variant is bad input (exit code 2), never a bug.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read.
    #[error("{file}: {msg}")]
    Io { file: String, msg: String },
    /// Structure: TOML syntax, unknown keys or kinds, wiring, duplicates.
    #[error("{at}: {msg}")]
    Invalid { at: Location, msg: String },
    /// A parameter value: wrong or missing unit, out of range, inconsistent.
    #[error("{at}: {msg}")]
    Param { at: Location, msg: String },
}

impl ScenarioError {
    pub fn is_param(&self) -> bool {
        matches!(self, ScenarioError::Param { .. })
    }
}
