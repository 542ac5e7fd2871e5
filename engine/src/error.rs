//! The engine's error type: every variant names the file involved.

use std::path::PathBuf;

/// An engine failure (simulated failures, like an unplaceable task, are data, not errors).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Reading the ingested trace failed.
    #[error(transparent)]
    Trace(#[from] ingest::IngestError),
    /// The run's length cannot be run: more ticks than a run holds, or far past the trace's
    /// end without `past_trace_end`.
    #[error("{0}")]
    RunLength(String),
    /// A bad configuration value or file.
    #[error("{path}: {problem}")]
    Config {
        /// The config source.
        path: PathBuf,
        /// What is wrong, with line and column when known.
        problem: String,
    },
    /// The trace has no machine events: the cell would have no machines.
    #[error(
        "{trace} has no machine_events rows, so the cell would have no machines; ingest the trace's machine_events table too (`cellsim ingest` without `--tables` ingests all six)"
    )]
    NoMachines {
        /// The ingested trace.
        trace: PathBuf,
    },
    /// The output directory already holds a finished run.
    #[error("{path} already holds a finished run (summary.json); give a new output directory")]
    RunExists {
        /// The output directory.
        path: PathBuf,
    },
    /// The output directory of a new run holds what the run did not write.
    #[error(
        "{path} holds what this run did not write: {holds}; give a new or empty output directory (a run deletes nothing it did not write)"
    )]
    NotOurs {
        /// The output directory.
        path: PathBuf,
        /// What is there.
        holds: String,
    },
    /// The cell broke an invariant (only checked with `check_invariants`): a bug.
    #[error("tick {tick}: cell invariant broken: {problem}")]
    Invariant {
        /// The tick after which it was found.
        tick: u32,
        /// What is wrong.
        problem: String,
    },
    /// A snapshot cannot be used (corrupt, truncated, foreign, another version or run).
    #[error(transparent)]
    Snapshot(#[from] crate::codec::SnapshotError),
    /// The policy could not go on (a hosted decider's error or wrong decision, `hosted/`).
    #[error("tick {tick}: the policy stopped the run: {problem}")]
    Policy {
        /// The tick in which it stopped.
        tick: u32,
        /// What stopped it.
        problem: String,
    },
    /// A policy declared or wrote a table the engine cannot write (a bug in the policy).
    #[error("the policy's table {table}: {problem}")]
    PolicyTable {
        /// The table's name.
        table: String,
        /// What is wrong.
        problem: String,
    },
    /// An output file a snapshot continues holds less than the snapshot says was written.
    #[error(
        "{path}: {problem}: the outputs written before the snapshot are incomplete, so the run cannot continue from it"
    )]
    OutputsIncomplete {
        /// The output file.
        path: PathBuf,
        /// What is missing.
        problem: String,
    },
    /// No snapshot of the run directory can be resumed from.
    #[error("{dir}: no usable snapshot: {reasons}")]
    NoUsableSnapshot {
        /// The snapshot directory.
        dir: PathBuf,
        /// Why each was skipped.
        reasons: String,
    },
    /// The output directory holds an unfinished run with snapshots.
    #[error(
        "{path} holds snapshots of an unfinished run; resume it (`cellsim resume {path}`) or give a new output directory"
    )]
    RunUnfinished {
        /// The output directory.
        path: PathBuf,
    },
    /// The engine broke a contract of its own: a bug in cellsim.
    #[error("internal error: {0} (a bug in cellsim; please report it)")]
    Internal(String),
    /// A filesystem operation failed.
    #[error("{path}: {source}")]
    Io {
        /// File or directory involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing Parquet failed.
    #[error("{path}: parquet: {source}")]
    Parquet {
        /// File involved.
        path: PathBuf,
        /// The parquet error.
        source: parquet::errors::ParquetError,
    },
}

impl EngineError {
    /// Wraps an IO error with its path.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> EngineError {
        let path = path.into();
        move |source| EngineError::Io { path, source }
    }

    /// Wraps a Parquet error with its path.
    pub fn parquet(
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(parquet::errors::ParquetError) -> EngineError {
        let path = path.into();
        move |source| EngineError::Parquet { path, source }
    }
}

/// Result with [`EngineError`].
pub type Result<T, E = EngineError> = std::result::Result<T, E>;
