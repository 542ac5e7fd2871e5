//! The ingest crate's error type: every variant names the file and, where there is one, the line
//! and column of the problem.

use std::path::PathBuf;

/// An ingest or generator failure.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// The trace directory does not exist or is not a directory.
    #[error("trace directory {path} does not exist or is not a directory")]
    MissingDir {
        /// The directory given.
        path: PathBuf,
    },
    /// A table was asked for but has no `part-*.csv[.gz]` files.
    #[error("table {table} has no .csv or .csv.gz files in {path}")]
    MissingTable {
        /// Table name.
        table: String,
        /// Where it was looked for.
        path: PathBuf,
    },
    /// None of the six tables is present.
    #[error(
        "{path} holds none of the GCD tables (machine_events, machine_attributes, job_events, task_events, task_constraints, task_usage)"
    )]
    NoTables {
        /// The directory given.
        path: PathBuf,
    },
    /// A row has the wrong number of fields.
    #[error("{path}:{line}: expected {expected} columns, found {found}")]
    ColumnCount {
        /// Input file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// Columns the table has.
        expected: usize,
        /// Columns the row has.
        found: usize,
    },
    /// A field cannot be parsed as its column's type, is out of range, or is empty but mandatory.
    #[error("{path}:{line}: column {column} ({name}): {problem}")]
    BadField {
        /// Input file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// 1-based column number.
        column: usize,
        /// Column name.
        name: &'static str,
        /// What is wrong, with the offending value.
        problem: String,
    },
    /// The compressed stream is corrupt or ends early.
    #[error("{path}: corrupt or truncated input after line {line}: {source}")]
    Corrupt {
        /// Input file.
        path: PathBuf,
        /// Last line read completely.
        line: u64,
        /// The decoder's error.
        source: std::io::Error,
    },
    /// A filesystem operation failed.
    #[error("{path}: {source}")]
    Io {
        /// File or directory involved.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Writing or reading Parquet failed.
    #[error("{path}: parquet: {source}")]
    Parquet {
        /// File involved.
        path: PathBuf,
        /// The parquet error.
        source: parquet::errors::ParquetError,
    },
    /// An Arrow kernel failed (sorting or merging a chunk).
    #[error("{path}: arrow: {source}")]
    Arrow {
        /// File involved.
        path: PathBuf,
        /// The arrow error.
        source: arrow_schema::ArrowError,
    },
    /// The caller asked the work to stop ([`crate::Progress::stop`],
    /// [`crate::synth::GenProgress::stop`]) before it finished; nothing of it was kept.
    #[error("stopped before it finished, as asked; nothing of it was kept")]
    Stopped,
    /// A raw trace (CSV parts) given where an ingested dataset was expected.
    #[error(
        "{path} holds the trace's CSV parts, not an ingested dataset: convert it first with `cellsim ingest {path} OUT` and give OUT"
    )]
    RawTrace {
        /// The directory given.
        path: PathBuf,
    },
    /// One table's directory of an ingested trace, given where the trace belongs.
    #[error("{path} is the {table} table of the ingested trace {trace}; give {trace}")]
    TableDir {
        /// The directory given.
        path: PathBuf,
        /// The table's name.
        table: String,
        /// The ingested trace holding it.
        trace: PathBuf,
    },
    /// A directory lacks the summary that marks a complete ingest.
    #[error(
        "{path} cannot be read ({source}); is this a directory written completely by `cellsim ingest`?"
    )]
    NotIngested {
        /// The summary path looked for.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The output directory given is a file.
    #[error(
        "{path} is a file; give a directory (new or an earlier ingest's) for the ingested trace"
    )]
    OutIsFile {
        /// The path given.
        path: PathBuf,
    },
    /// The trace's Parquet parts are not those its summary lists (deleted, truncated, replaced
    /// or added since the ingest): a run over them would silently replay another trace.
    #[error(
        "{trace}: the ingested parts differ from its ingest-summary.json: {problems}; ingest the trace again (or restore the parts)"
    )]
    PartsChanged {
        /// The ingested trace directory.
        trace: PathBuf,
        /// Each difference, naming the part.
        problems: String,
    },
    /// The summary exists but is not what ingest writes.
    #[error("{path}: not an ingest summary: {problem}")]
    BadSummary {
        /// The summary path.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The summary of an earlier ingest into the output directory cannot be read (damaged, or
    /// an older cellsim's), so the tables it lists would be lost from the new one.
    #[error(
        "{path}: the summary of an earlier ingest there cannot be read ({problem}); remove it and ingest every table there again, or give another directory"
    )]
    EarlierSummary {
        /// The summary path.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The Parquet decoder gave up on a damaged part by panicking (it does on some malformed
    /// pages); caught at the part's boundary so that it is an error naming the file.
    #[error(
        "{path}: damaged Parquet part (the decoder failed: {message}); restore it from the ingest or ingest the table again"
    )]
    DamagedPart {
        /// The part file.
        path: PathBuf,
        /// The decoder's panic message.
        message: String,
    },
    /// An ingested part's columns are not the table's (another program's file, or a damaged
    /// one): reading it would misread its values.
    #[error("{path}: not an ingested {table} part: {problem}")]
    PartSchema {
        /// The part file.
        path: PathBuf,
        /// The table it should hold.
        table: &'static str,
        /// What differs.
        problem: String,
    },
    /// Invalid generator or ingest settings.
    #[error("invalid settings: {0}")]
    Config(String),
}

impl IngestError {
    /// Wraps an IO error with the path it concerns.
    pub fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> IngestError {
        let path = path.into();
        move |source| IngestError::Io { path, source }
    }

    /// Wraps a Parquet error with the file it concerns.
    pub fn parquet(
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(parquet::errors::ParquetError) -> IngestError {
        let path = path.into();
        move |source| IngestError::Parquet { path, source }
    }

    /// True for errors about one row that `--skip-bad-rows` may skip.
    pub fn is_row_error(&self) -> bool {
        matches!(
            self,
            IngestError::ColumnCount { .. } | IngestError::BadField { .. }
        )
    }
}

/// Result with [`IngestError`].
pub type Result<T, E = IngestError> = std::result::Result<T, E>;
