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
    /// A run directory whose run has not finished (killed, stopped or still running).
    #[error(
        "{dir} holds a run that has not finished (no {summary} yet): `cellsim resume {dir}` finishes it; the parts written so far can be read now (`{dir}/ticks/*.parquet`, one per simulated day)"
    )]
    Unfinished {
        /// The run directory.
        dir: std::path::PathBuf,
        /// The summary's file name.
        summary: &'static str,
    },
    /// An ingested trace given where a run directory belongs.
    #[error("{dir} is an ingested trace, not a run directory; `cellsim stats {dir}` describes it")]
    TraceNotRun {
        /// The directory given.
        dir: std::path::PathBuf,
    },
    /// A run summary that does not parse.
    #[error("{path}: not a run summary: {problem}")]
    BadRunSummary {
        /// The summary path.
        path: std::path::PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A run's `schema.json` that does not parse.
    #[error(
        "{path}: not a run's schema (what its policy declares, written when the run started): {problem}"
    )]
    BadSchema {
        /// The schema path.
        path: std::path::PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// An output part (`RUN/ticks/part-*.parquet`, ...) that cannot be read as cellsim wrote it.
    #[error("{path}: not a readable cellsim output part: {problem}")]
    BadPart {
        /// The part file.
        path: std::path::PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// A timing window without ticks (`cellsim report --timing --from-tick`).
    #[error(
        "{path}: no ticks to time from tick {from} on (the run's ticks are 0 to {last}, the first reported alone)"
    )]
    EmptyWindow {
        /// The run's `timing/` directory.
        path: std::path::PathBuf,
        /// The window's first tick.
        from: u32,
        /// The run's last tick.
        last: u32,
    },
    /// A run whose `ticks/` holds no rows.
    #[error("{path} holds no ticks to draw")]
    NoTicks {
        /// The run's `ticks/` directory.
        path: std::path::PathBuf,
    },
    /// A figure path whose extension names no format written.
    #[error("{path}: a figure is written as .svg or .png; give a path ending in one of them")]
    FigureFormat {
        /// The path given.
        path: std::path::PathBuf,
    },
    /// Drawing a figure failed.
    #[error("drawing {path}: {problem}")]
    Figure {
        /// The figure's path.
        path: std::path::PathBuf,
        /// What failed.
        problem: String,
    },
    /// Writing an output file failed (nothing of it is left).
    #[error("writing {path}: {source}")]
    Write {
        /// The file written (its temporary name, or the target of the rename).
        path: std::path::PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// An experiment stopped by a signal before every point was measured; those measured are
    /// kept (`experiment/keep.rs`).
    #[error("stopped by a signal with {done} of {total} points measured")]
    Stopped {
        /// Points measured (kept).
        done: usize,
        /// Points in all.
        total: usize,
    },
    /// An experiment that cannot be set up or run (`cellsim experiment`).
    #[error("{0}")]
    Experiment(String),
    /// Running a policy failed.
    #[error(transparent)]
    Engine(#[from] engine::EngineError),
    /// Reading a dataset failed.
    #[error(transparent)]
    Ingest(#[from] ingest::IngestError),
}

/// Result with [`AnalysisError`].
pub type Result<T, E = AnalysisError> = std::result::Result<T, E>;
