//! The analysis crate's error type.

/// A failure reading an ingested trace or a run directory.
#[derive(Debug, thiserror::Error)]
pub enum AnalysisError {
    /// A directory without the summary of a finished run.
    #[error("{path} cannot be read ({source}); is this a finished `cellsim run` directory?")]
    NotARun {
        /// The summary path looked for.
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// A run summary that does not parse.
    #[error("{path}: not a run summary: {problem}")]
    BadRunSummary {
        /// The summary path.
        path: std::path::PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// Reading a dataset failed.
    #[error(transparent)]
    Ingest(#[from] ingest::IngestError),
}

/// Result with [`AnalysisError`].
pub type Result<T, E = AnalysisError> = std::result::Result<T, E>;
