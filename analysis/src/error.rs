//! The analysis crate's error type.

use std::path::PathBuf;

/// A failure reading an ingested trace or a run directory.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// The directory lacks the summary that marks a complete ingest.
    #[error(
        "{path} cannot be read ({source}); is this a directory written completely by `cellsim ingest`?"
    )]
    NotIngested {
        /// The summary path looked for.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The summary exists but is not what ingest writes.
    #[error("{path}: not an ingest summary: {problem}")]
    BadSummary {
        /// The summary path.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// Reading a dataset failed.
    #[error(transparent)]
    Ingest(#[from] ingest::IngestError),
}

/// Result with [`AnalysisError`].
pub type Result<T, E = AnalysisError> = std::result::Result<T, E>;
